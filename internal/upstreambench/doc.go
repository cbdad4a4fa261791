//go:build linux

// Package upstreambench measures the ring buffer drain benchmark of
// internal/drainbench against two versions of cilium/ebpf, a base and a
// head (a release, a checkout of main, a pull request), for `make
// bench-upstream`.
//
// It never touches the repository's go.mod. For each side it writes a
// scratch module (a go.mod whose replace directives point
// github.com/cilium/ebpf at the side and github.com/ebpf-zc/ebpf at this
// repository) and a benchmark generated for the reading API that side
// offers, detected from the exported names of its ringbuf package:
// Reader.ReadInto always; RawReader with a Lease, committed once a drain
// and after every record, where it exists. Our own reader's modes run in
// the same binary where our module compiles against the side. Modes a side
// lacks are reported as absent, in the output and in the results files.
//
// The scratch module's path lies under github.com/ebpf-zc/ebpf/, which is
// what lets it import this repository's internal packages: the go command
// checks internal imports by import path. The runs of the two sides are
// interleaved, then benchstat compares them mode by mode.
package upstreambench
