package ringbuf

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	upstream "github.com/cilium/ebpf/ringbuf"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

// TestUpstreamPath runs what the Windows Reader (reader_windows.go) runs
// on a WindowsRingBuf map over a Linux ring buffer, where cilium/ebpf's
// reader reads it too: everything but the Windows calls inside
// cilium/ebpf. The copy API works; the zero-copy loops say
// ErrNotSupported (and MultiReader does: TestChoosePath).
func TestUpstreamPath(t *testing.T) {
	m := newRingMap(t, 1<<14)
	p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 40, Pattern: true})
	up, err := upstream.NewReader(m)
	if err != nil {
		t.Fatal(err)
	}
	r := &upstreamPath{up}
	defer r.Close()
	if r.BufferSize() != 1<<14 {
		t.Fatalf("BufferSize %d, want %d", r.BufferSize(), 1<<14)
	}
	produce(t, p, 3)
	if got, want := r.AvailableBytes(), 3*48; got != want {
		t.Fatalf("AvailableBytes %d, want %d", got, want)
	}
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if seq, err := progs.CheckRecord(rec.RawSample, 40, true); err != nil || seq != 0 {
		t.Fatalf("first record: seq %d, %v", seq, err)
	}
	if rec.Remaining != 2*48 {
		t.Fatalf("Remaining %d, want %d", rec.Remaining, 2*48)
	}
	buf := rec.RawSample
	if err := r.ReadInto(&rec); err != nil {
		t.Fatal(err)
	}
	if &rec.RawSample[0] != &buf[0] {
		t.Error("ReadInto did not reuse RawSample's capacity")
	}
	if seq, err := progs.CheckRecord(rec.RawSample, 40, true); err != nil || seq != 1 {
		t.Fatalf("second record: seq %d, %v", seq, err)
	}

	if err := readIntoUpstream(up, nil); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("ReadInto(nil): %v, want os.ErrInvalid", err)
	}
	for name, err := range map[string]error{
		"Records": func() (err error) {
			for _, err = range copyOnlySeq[*Record] {
			}
			return err
		}(),
		"Batches": func() (err error) {
			for _, err = range copyOnlySeq[*Batch] {
			}
			return err
		}(),
	} {
		if !errors.Is(err, ebpf.ErrNotSupported) {
			t.Errorf("%s: %v, want ErrNotSupported", name, err)
		}
	}

	// The third record is still there for the copy API.
	if rec, err := r.Read(); err != nil {
		t.Fatal(err)
	} else if seq, err := progs.CheckRecord(rec.RawSample, 40, true); err != nil || seq != 2 {
		t.Fatalf("third record: seq %d, %v", seq, err)
	}
	r.SetDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	r.SetDeadline(time.Time{})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(); !errors.Is(err, ErrFlushed) {
		t.Fatalf("read after Flush: %v, want ErrFlushed", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after Close: %v, want ErrClosed", err)
	}
}

// upstreamPath is the Windows Reader's copy API over upstream's reader.
type upstreamPath struct {
	*upstream.Reader
}

func (r *upstreamPath) Read() (Record, error) {
	var rec Record
	err := r.ReadInto(&rec)
	return rec, err
}

func (r *upstreamPath) ReadInto(rec *Record) error { return readIntoUpstream(r.Reader, rec) }
