//go:build linux

package ringbuf

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

// snapshotErrs takes one snapshot of r and returns its records' sequence
// numbers and its errors.
func snapshotErrs(tb testing.TB, r *SnapshotReader, recordSize int) (got []uint64, errs []error) {
	tb.Helper()
	for sample, err := range r.Snapshot() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, seqs(tb, [][]byte{sample}, recordSize)...)
	}
	return got, errs
}

// TestSnapshotBadHeader checks that a snapshot hands out the records
// before a header that claims more than was produced, then ErrCorrupt,
// and that the next snapshot stops at the same header: the records
// before it are not held back with it.
func TestSnapshotBadHeader(t *testing.T) {
	const recordSize = 56
	f := newOverwriteFake(t, 4096)
	for seq := range uint64(5) {
		f.write(progs.AppendOverwriteRecord(nil, seq, recordSize))
	}
	f.writeHeader(3*(recordSize+headerSize), 4000) // record 3 claims 4000 bytes
	r := f.reader(t)
	got, errs := snapshotErrs(t, r, recordSize)
	if len(got) != 3 || got[2] != 2 || len(errs) != 1 || !errors.Is(errs[0], ErrCorrupt) {
		t.Fatalf("snapshot over a bad header: records %v, errors %v; want 0 1 2, then ErrCorrupt", got, errs)
	}
	got, errs = snapshotErrs(t, r, recordSize)
	if len(got) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrCorrupt) {
		t.Fatalf("next snapshot: records %v, errors %v; want ErrCorrupt alone", got, errs)
	}
	if st := r.Stats(); st.Records != 3 {
		t.Fatalf("stats %+v, want 3 records handed out", st)
	}
}

// TestSnapshotMisalignedOverwrite moves the overwrite position off a
// record's start (and off 8-byte alignment) between a snapshot's copy and
// its re-check: the snapshot fails with ErrCorrupt, hands nothing out,
// and the reader still closes, refusing snapshots after.
func TestSnapshotMisalignedOverwrite(t *testing.T) {
	const recordSize = 56
	f := newOverwriteFake(t, 4096)
	for seq := range uint64(10) {
		f.write(progs.AppendOverwriteRecord(nil, seq, recordSize))
	}
	r := f.reader(t)
	snapshotCopied = func() { atomic.AddUint64(&f.words[3], 1) }
	t.Cleanup(func() { snapshotCopied = nil })
	got, errs := snapshotErrs(t, r, recordSize)
	snapshotCopied = nil
	if len(got) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrCorrupt) {
		t.Fatalf("records %v, errors %v; want ErrCorrupt alone", got, errs)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, errs := snapshotErrs(t, r, recordSize); len(errs) != 1 || !errors.Is(errs[0], ErrClosed) {
		t.Fatalf("snapshot after Close: %v, want ErrClosed alone", errs)
	}
}

// TestSnapshotPositionsFarApart sets the overwrite position ahead of the
// producer position, and far enough from the handed-out position that it
// seems behind it: the copy would span the distance from there to the
// producer position, more than a ring: a megabyte here, but up to 2^63
// bytes, which the copy allocated before the check. The snapshot fails
// with ErrCorrupt, and makes no such copy.
func TestSnapshotPositionsFarApart(t *testing.T) {
	f := newOverwriteFake(t, 4096)
	r := f.reader(t)
	f.words[1], f.words[3] = 1<<20, 1<<63+1<<20
	got, errs := snapshotErrs(t, r, 56)
	if len(got) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrCorrupt) {
		t.Fatalf("records %v, errors %v; want ErrCorrupt alone", got, errs)
	}
}
