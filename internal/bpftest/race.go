//go:build race

package bpftest

// RaceEnabled reports whether the race detector is built in: a test of
// concurrent misuse that the detector reports by design skips under it.
const RaceEnabled = true
