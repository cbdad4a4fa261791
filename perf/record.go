package perf

// Record is a sample or a count of lost samples read from a CPU's buffer.
type Record struct {
	// CPU is the CPU whose buffer held the record.
	CPU int
	// RawSample is the data passed to bpf_perf_event_output and the
	// kernel's padding: a copy from Read and ReadInto, a view from Records;
	// empty in a record of lost samples.
	RawSample []byte
	// LostSamples is the number of samples the kernel could not place in
	// the full buffer; non-zero only in a record of lost samples.
	LostSamples uint64
	// Remaining is the minimum number of bytes left in the CPU's buffer
	// after it; -1 for overwritable buffers.
	Remaining int
}
