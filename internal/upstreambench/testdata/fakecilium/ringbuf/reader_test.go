package ringbuf

// ExportedInTest lives in a test file: detection must pass it over.
func ExportedInTest() {}
