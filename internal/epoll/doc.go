// Package epoll waits for a BPF map's readiness together with wake-ups sent
// from user space (close, flush, deadline changes, released records).
//
// A Poller owns an epoll instance and an eventfd. The map fd is registered
// edge-triggered: a ring buffer reports readable for as long as the
// kernel's consumer position lags the producer, which is also true while
// records are claimed but not yet released by this process, so a
// level-triggered registration would spin. The eventfd is level-triggered:
// a wake-up stays visible to every waiter until Drain.
package epoll
