package ringbuf

// WindowsOnly builds on Windows only: detection, which looks at Linux,
// must pass it over.
func WindowsOnly() {}
