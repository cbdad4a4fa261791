// Package readers holds what the readers of ringbuf and perf share beyond
// the kernel's layout of their buffers: the rules every read style of
// both follows, written once.
package readers
