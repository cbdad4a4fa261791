// Package ebpf is a fake of cilium/ebpf's root package: only the Map type
// the ringbuf package's constructors take.
package ebpf

// Map stands for a BPF map.
type Map struct{}
