// Package importer holds the test that imports this module the way a
// user's program does: a throwaway module on cilium/ebpf v0.22's go line
// that imports ringbuf and perf, tidied, keeps its go line and gains none
// of the benchmark, plotting or lint tooling (internal/tools).
package importer
