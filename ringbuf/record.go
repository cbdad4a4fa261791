package ringbuf

// Record is a sample read from the ring buffer.
type Record struct {
	// RawSample is the record's payload: a copy from Read and ReadInto, a
	// view of the ring from [Reader.Peek], [Reader.PeekInto] and
	// [Reader.Records], valid as they say.
	RawSample []byte
	// Remaining is the minimum number of bytes left in the ring after it.
	Remaining int
	// Ring is the ring of a [MultiReader]'s record: its map's index in
	// [NewMultiReader]'s list, or its key in the map of maps; 0 from a Reader.
	Ring int
}
