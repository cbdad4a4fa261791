//go:build linux

package ringbuf

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/epoll"
	"github.com/ebpf-zc/ebpf/internal/readers"
)

// fakeRing is a ring in the kernel's layout without a kernel: a memfd
// mapped twice back to back for the data area, positions in Go memory.
// The test plays the producer.
type fakeRing struct {
	data      []byte // 2*size bytes: both mappings
	size      uint64
	positions *[2]uint64 // consumer, producer
}

func newFakeRing(tb testing.TB, size int) *fakeRing {
	tb.Helper()
	fd, err := unix.MemfdCreate("ringbuf-test", unix.MFD_CLOEXEC)
	if err != nil {
		tb.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		tb.Fatal(err)
	}
	// Reserve twice the size, then map the memfd over each half.
	area, err := unix.Mmap(-1, 0, 2*size, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Munmap(area) })
	for half := 0; half < 2; half++ {
		_, err := unix.MmapPtr(fd, 0, unsafe.Pointer(&area[half*size]), uintptr(size),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return &fakeRing{data: area, size: uint64(size), positions: new([2]uint64)}
}

// reader returns a Reader over the fake ring, starting at its consumer
// position. Waits rely on deadlines: no kernel wakes it.
func (f *fakeRing) reader(tb testing.TB) (*Reader, error) {
	tb.Helper()
	rg, err := newRing(&f.positions[0], &f.positions[1], unsafe.Pointer(&f.data[0]), f.size)
	if err != nil {
		return nil, err
	}
	poller, err := epoll.New()
	if err != nil {
		tb.Fatal(err)
	}
	readers.AddRingMemory(f.data) // as mapRing does
	r := &Reader{&reader{}}
	if err := r.start([]*ring{rg}, &resources{poller: poller}); err != nil {
		poller.Close()
		return nil, err
	}
	r.lend()
	tb.Cleanup(func() { r.Close() })
	return r, nil
}

// rawReader returns a RawReader over the fake ring.
func (f *fakeRing) rawReader(tb testing.TB) (*RawReader, error) {
	tb.Helper()
	rd, err := f.reader(tb)
	if err != nil {
		return nil, err
	}
	return &RawReader{rings: &rd.rings, leaseState: &leaseState{c: &rd.consumers[0]}}, nil
}

// isView reports whether b, up to its capacity, overlaps the data area,
// mapped twice.
func (rg *ring) isView(b []byte) bool {
	start, data := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(rg.data)
	return cap(b) > 0 && start < data+uintptr(2*rg.size) && data < start+uintptr(cap(b))
}

func (f *fakeRing) producer() uint64 { return atomic.LoadUint64(&f.positions[1]) }

// writeHeader writes a raw header word at pos.
func (f *fakeRing) writeHeader(pos uint64, hdr uint32) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&f.data[pos&(f.size-1)])), hdr)
}

// reserve writes a busy record of payload at the producer position and
// publishes the new producer position, as bpf_ringbuf_reserve does.
func (f *fakeRing) reserve(payload []byte) uint64 {
	pos := f.producer()
	off := pos & (f.size - 1)
	binary.NativeEndian.PutUint32(f.data[off+4:], 0)
	copy(f.data[off+headerSize:], payload) // may run into the second mapping: it wraps
	f.writeHeader(pos, uint32(len(payload))|busyBit)
	total := (uint64(len(payload)) + headerSize + 7) &^ 7
	atomic.StoreUint64(&f.positions[1], pos+total)
	return pos
}

// commit clears the busy bit, optionally marking the record discarded.
func (f *fakeRing) commit(pos uint64, length int, discard bool) {
	hdr := uint32(length)
	if discard {
		hdr |= discardBit
	}
	f.writeHeader(pos, hdr)
}

func (f *fakeRing) write(payload []byte) {
	f.commit(f.reserve(payload), len(payload), false)
}

func readAll(tb testing.TB, r *Reader) (samples [][]byte, err error) {
	tb.Helper()
	r.SetDeadline(time.Now())
	for {
		rec, err := r.Read()
		if err != nil {
			return samples, err
		}
		samples = append(samples, rec.RawSample)
	}
}

func TestFakeRingRecords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(f *fakeRing)
		want    []string
		wantErr error
	}{
		{
			name:    "empty",
			setup:   func(f *fakeRing) {},
			wantErr: os.ErrDeadlineExceeded,
		},
		{
			name: "zero-length and odd sizes",
			setup: func(f *fakeRing) {
				f.write(nil)
				f.write([]byte("a"))
				f.write([]byte("seven77"))
				f.write([]byte("exactly8"))
				f.write([]byte("nine bytes"))
			},
			want:    []string{"", "a", "seven77", "exactly8", "nine bytes"},
			wantErr: os.ErrDeadlineExceeded,
		},
		{
			name: "discarded records are skipped",
			setup: func(f *fakeRing) {
				f.write([]byte("one"))
				f.commit(f.reserve([]byte("gone")), 4, true)
				f.commit(f.reserve([]byte("gone too")), 8, true)
				f.write([]byte("two"))
				f.commit(f.reserve([]byte("last, gone")), 10, true)
			},
			want:    []string{"one", "two"},
			wantErr: os.ErrDeadlineExceeded,
		},
		{
			name: "a busy record stops the read, later ones wait for it",
			setup: func(f *fakeRing) {
				f.write([]byte("ready"))
				f.reserve([]byte("busy"))
				f.write([]byte("behind the busy one"))
			},
			want:    []string{"ready"},
			wantErr: os.ErrDeadlineExceeded,
		},
		{
			name: "wraparound",
			setup: func(f *fakeRing) {
				// Start 16 bytes before the end of the 4 KiB ring.
				start := uint64(3*4096 - 16)
				f.positions[0], f.positions[1] = start, start
				f.write([]byte("crosses the end of the ring"))
				f.write([]byte("after the wrap"))
			},
			want:    []string{"crosses the end of the ring", "after the wrap"},
			wantErr: os.ErrDeadlineExceeded,
		},
		{
			name: "length past the producer position",
			setup: func(f *fakeRing) {
				f.write([]byte("fine"))
				pos := f.reserve([]byte("short"))
				f.writeHeader(pos, 100) // claims 100 bytes, 16 produced
			},
			want:    []string{"fine"},
			wantErr: ErrCorrupt,
		},
		{
			name: "length larger than the ring",
			setup: func(f *fakeRing) {
				pos := f.reserve([]byte("x"))
				f.writeHeader(pos, lengthMask)
			},
			wantErr: ErrCorrupt,
		},
		{
			name: "producer more than a ring ahead",
			setup: func(f *fakeRing) {
				f.write([]byte("x"))
				atomic.StoreUint64(&f.positions[1], 2*4096)
			},
			wantErr: ErrCorrupt,
		},
		{
			name: "producer position misaligned",
			setup: func(f *fakeRing) {
				f.write([]byte("x"))
				atomic.AddUint64(&f.positions[1], 4)
			},
			wantErr: ErrCorrupt,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRing(t, 4096)
			tc.setup(f)
			r, err := f.reader(t)
			if err != nil {
				t.Fatal(err)
			}
			samples, err := readAll(t, r)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("read ended with %v, want %v", err, tc.wantErr)
			}
			if len(samples) != len(tc.want) {
				t.Fatalf("read %q, want %q", samples, tc.want)
			}
			for i := range samples {
				if string(samples[i]) != tc.want[i] {
					t.Errorf("record %d is %q, want %q", i, samples[i], tc.want[i])
				}
			}
			if errors.Is(tc.wantErr, ErrCorrupt) {
				// The error sticks: no read goes past the bad record.
				if _, err := r.Read(); !errors.Is(err, ErrCorrupt) {
					t.Errorf("read after corruption: %v", err)
				} else if !errors.Is(err, io.ErrUnexpectedEOF) {
					// Code written for cilium/ebpf checks for this.
					t.Errorf("read after corruption: %v does not match io.ErrUnexpectedEOF", err)
				}
			}
		})
	}
}

func TestFakeRingMisalignedConsumer(t *testing.T) {
	f := newFakeRing(t, 4096)
	f.positions[0], f.positions[1] = 4, 4
	if _, err := f.reader(t); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reader at a misaligned consumer position: %v", err)
	}
}

// TestFakeRingBusyCommittedLater: a reader waits for a busy record and
// returns it once committed, without a wake-up (none comes from a fake).
func TestFakeRingBusyCommittedLater(t *testing.T) {
	f := newFakeRing(t, 4096)
	r, err := f.reader(t)
	if err != nil {
		t.Fatal(err)
	}
	pos := f.reserve([]byte("slow"))
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.commit(pos, 4, false)
	}()
	r.SetDeadline(time.Now().Add(5 * time.Second))
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.RawSample) != "slow" {
		t.Fatalf("read %q", rec.RawSample)
	}
}

// TestFakeRingPublishesConsumerPosition: the position the "kernel" sees is
// never more than batchBytes behind, and exact once the reader waits.
func TestFakeRingPublishesConsumerPosition(t *testing.T) {
	f := newFakeRing(t, 1<<16)
	r, err := f.reader(t)
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 56)
	for i := 0; i < 1000; i++ {
		f.write(payload)
		rec, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		_ = rec
		c := &r.consumers[0]
		if lag := c.claims.ConsumerPos() - atomic.LoadUint64(&f.positions[0]); lag > c.batchBytes {
			t.Fatalf("kernel's consumer position lags by %d bytes, bound %d", lag, c.batchBytes)
		}
		if n := r.AvailableBytes(); n != 0 {
			t.Fatalf("AvailableBytes %d after reading everything", n)
		}
	}
	r.SetDeadline(time.Now())
	if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal(err)
	}
	if got, want := atomic.LoadUint64(&f.positions[0]), f.producer(); got != want {
		t.Fatalf("consumer position %d after the reader gave up, want %d", got, want)
	}
}

// TestLoadProducerWhileConsumerMoves: the kernel's consumer position moves
// without the reader's mutex (another reader of the map)
// and the kernel fills the ring behind it at once. The producer position
// is never more than a ring ahead of the consumer's at any instant, so
// loadProducer must never call it corrupt.
func TestLoadProducerWhileConsumerMoves(t *testing.T) {
	const size = 4096
	f := newFakeRing(t, size)
	rg, err := newRing(&f.positions[0], &f.positions[1], unsafe.Pointer(&f.data[0]), size)
	if err != nil {
		t.Fatal(err)
	}
	atomic.StoreUint64(&f.positions[1], size)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pos := uint64(0); ; pos += recordAlign {
			select {
			case <-stop:
				return
			default:
			}
			atomic.StoreUint64(&f.positions[0], pos+recordAlign)      // consumed one record
			atomic.StoreUint64(&f.positions[1], pos+recordAlign+size) // the kernel fills the space
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range 1_000_000 {
		if _, err := rg.loadProducer(rg.loadConsumer()); err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
	}
}

// TestLoadAhead checks the word the walk loads ahead: aheadRecords
// records on, wrapping at the end of the data area.
func TestLoadAhead(t *testing.T) {
	const size = 4096
	mem := make([]uint32, size/4)
	for i := range mem {
		mem[i] = uint32(i)
	}
	area := dataArea{data: unsafe.Pointer(&mem[0]), mask: size - 1}
	for _, tc := range []struct{ pos, total uint64 }{{0, 16}, {64, 272}, {size - 8, 24}, {3*size + 8, 2048}} {
		want := uint32(((tc.pos + aheadRecords*tc.total) & (size - 1)) / 4)
		if got := area.loadAhead(tc.pos, tc.total); got != want {
			t.Errorf("loadAhead(%d, %d) read word %d, want %d", tc.pos, tc.total, got, want)
		}
	}
}
