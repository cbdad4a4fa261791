// Package importer holds the test that imports this checkout the way a
// user's program does: a throwaway module on cilium/ebpf v0.22's go line
// that imports ringbuf and perf (a replace directive names the checkout),
// tidied, keeps its go line and gains none of the benchmark, plotting or
// lint tooling (internal/tools). It guards main between releases. A
// release as README.md's install line names it is installed from a file
// GOPROXY by internal/tools/release's TestImporter, which needs x/mod's
// zip code and so lives in the tools module.
package importer
