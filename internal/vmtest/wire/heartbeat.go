package wire

import "time"

// HeartbeatDevice is the second serial port, on which the guest init
// writes one byte every HeartbeatInterval for as long as the guest runs.
// The host's watchdog counts it as a sign of life next to the console,
// which a test may leave quiet for long stretches: a guest that stops
// both (a hung kernel, a vCPU the accelerator paused) is stopped within
// the watchdog instead of the host timeout. It is a port of its own so
// the bytes never land inside a test's output lines.
const HeartbeatDevice = "/dev/ttyS1"

// HeartbeatInterval is how often the guest init beats.
const HeartbeatInterval = time.Second
