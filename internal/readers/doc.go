// Package readers holds what the readers of ringbuf and perf share beyond
// their buffers' layout: the claims on a buffer's records (Claims) and
// the engine that claims, waits, publishes and closes (Engine).
package readers
