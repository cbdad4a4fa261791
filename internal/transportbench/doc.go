//go:build linux

// Package transportbench compares the ways a BPF program hands events to user
// space: a perf event array (bpf_perf_event_output), a ring buffer
// (bpf_ringbuf_output, or reserve and submit) and a queue map
// (bpf_map_push_elem).
//
// ProducerRig measures what one event costs the program: it runs a
// producer in test-run loops with nobody reading, emptying the buffer
// between loops so it never fills. Run measures what reaches user space:
// a producer pinned to one CPU runs as fast as it can while a consumer
// pinned to another drains, and every delivered event is checked by its
// sequence number.
//
//	rig, err := transportbench.NewProducerRig(transportbench.ProducerCases()[0], 80)
//	...
//	res, err := transportbench.Run(transportbench.Config{Case: transportbench.EndToEndCases()[0], Size: 80, Duration: time.Second})
package transportbench
