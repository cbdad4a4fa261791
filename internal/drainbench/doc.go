//go:build linux

// Package drainbench is the ring buffer drain benchmark that
// ringbuf/bench_test.go and the upstream comparison (internal/upstreambench)
// share: one ring a size, filled untimed by a test-run producer from
// internal/progs, drained by each mode in turn, with the records counted
// and the bytes each mode touched summed and checked.
//
// A mode is anything that can drain n records and say what it touched:
//
//	drainbench.Run(b, 256<<20, []int{16, 4096}, []drainbench.Mode{
//		{Name: "upstream", Open: drainbench.OpenUpstream},
//	})
//
// The package uses cilium/ebpf's ringbuf Reader only through names every
// release since v0.10.0 has (Reader.ReadInto, Reader.SetDeadline), so it
// compiles against newer checkouts too, wherever internal/progs does. The
// readers of github.com/ebpf-zc/ebpf live in the subpackage ours, which is
// built only where our module compiles against that checkout; the timed
// loop, the touch and the sum check, which the perf drain shares, in the
// subpackage drainloop.
package drainbench
