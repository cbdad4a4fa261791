// Package epoll waits for a BPF map's readiness together with wake-ups sent
// from user space (close, flush, deadline changes, released records): a
// Poller (epoll and an eventfd), and a Waiter, the rules that end a wait;
// and, made on demand, the readiness an outside event loop polls instead
// (readiness_linux.go).
// Map fds are registered edge-triggered: a ring buffer stays readable
// while records are claimed but not yet released, and would spin a
// level-triggered wait.
package epoll
