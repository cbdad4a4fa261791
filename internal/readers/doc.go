// Package readers holds what the readers of ringbuf and perf share beyond
// their buffers' layout, written once: the claims on a buffer's records
// (Claims) and the engine that claims, waits, publishes and closes
// (Engine). docs/architecture.md tells how they fit.
package readers
