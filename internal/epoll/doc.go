// Package epoll is where a reader waits: a Poller (epoll and a wake-up
// eventfd), a Waiter with the rules that end a wait, and the Readiness an
// outside event loop polls. Map fds are edge-triggered: a ring buffer stays
// readable while claimed records are not yet released, and would spin a
// level-triggered wait.
package epoll
