//go:build linux

package ringbuf_test

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/internal/libbpfwrite"
	"github.com/ebpf-zc/ebpf/internal/progs"
	"github.com/ebpf-zc/ebpf/ringbuf"
)

// BenchmarkWrite takes its record sizes from -ringbuf.sizes, as
// BenchmarkRead does; its ring is its own: 4 MiB by default, so that what
// is written is still in the cache (L3) when the kernel drains it, and
// the benchmark measures the protocol rather than the memory.
var writeRing = flag.Int("ringbuf.writering", benchfamily.MustInt("RINGBUF_WRITE_RING"),
	"user ring buffer size in bytes for BenchmarkWrite (env RINGBUF_WRITE_RING)")

// batchWriter writes count records numbered from first: the record's
// payload, with its sequence number in the first 8 bytes.
type batchWriter interface {
	write(first uint64, count int) error
	Close() error
}

// writeModes are BenchmarkWrite's producers: our Reserve/Submit filling
// the record in place, our Write, the same Reserve/Submit from two
// goroutines at once, and libbpf's user_ring_buffer__reserve/__submit in
// C. Each writes every byte of every record.
var writeModes = []struct {
	name string
	open func(m *ebpf.Map, payload []byte) (batchWriter, error)
}{
	{"reserve", openReserve(1, 0)},
	{"write", openWrite},
	{"reserve-x2", openReserve(2, 0)},
	{"batch", openReserve(1, writeBatch)},
	{"batch-x2", openReserve(2, writeBatch)},
	{"libbpf", openLibbpfWrite},
}

// BenchmarkWrite writes records to a user ring buffer, and drains them
// with a BPF program (bpf_user_ringbuf_drain, a callback reading each
// record's first 8 bytes through its dynptr) run with test-run: an op is
// one record written and then drained. Each round writes as many records
// as the ring holds, then drains them all; the count and the sum of the
// sequence numbers the kernel read are checked. Besides the rate of the
// whole op it reports write-ns/rec, the wall time of the writes alone: what
// a record costs the producer (for reserve-x2, the two goroutines at once),
// apart from the kernel's drain, which is the same for every mode.
func BenchmarkWrite(b *testing.B) {
	sizes, err := drainbench.ParseSizes(*benchSizes)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range sizes {
		for _, mode := range writeModes {
			b.Run(fmt.Sprintf("size=%d/mode=%s", size, mode.name), func(b *testing.B) {
				benchWrite(b, size, mode.name, mode.open)
			})
		}
	}
}

func benchWrite(b *testing.B, size int, mode string, open func(*ebpf.Map, []byte) (batchWriter, error)) {
	bpftest.SkipIfUnavailable(b, progs.HaveUserRingbuf(), "user ring buffers")
	m, err := progs.NewUserRing(*writeRing)
	bpftest.SkipIfNoRingBuf(b, err)
	defer m.Close()
	drain, err := progs.NewUserRingDrain(m, progs.DrainSum, 0)
	bpftest.SkipIfNoRingBuf(b, err)
	defer drain.Close()
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i)
	}
	w, err := open(m, payload)
	if errors.Is(err, libbpfwrite.ErrNoLibbpf) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	perRound := *writeRing / ((size + 8 + 7) &^ 7)

	// One goroutine's modes stay on one thread, whose CPU clock then
	// counts what a record cost to write and drain (the drain runs in
	// the test-run syscall, on this thread): on a shared machine it moves
	// far less than the wall clock, which counts the time other
	// processes had the CPU too.
	if !strings.HasSuffix(mode, "-x2") {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpuStart := threadCPUTime()
	var (
		written uint64
		writing time.Duration
	)
	for written < uint64(b.N) {
		n := min(perRound, b.N-int(written))
		start := time.Now()
		if err := w.write(written, n); err != nil {
			b.Fatal(err)
		}
		writing += time.Since(start)
		for drained := 0; drained < n; {
			k, err := drain.Drain()
			if err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				b.Fatalf("the drain found nothing after %d of %d records", drained, n)
			}
			drained += k
		}
		written += uint64(n)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
	b.ReportMetric(float64(writing.Nanoseconds())/float64(b.N), "write-ns/rec")
	if !strings.HasSuffix(mode, "-x2") {
		b.ReportMetric(float64(threadCPUTime()-cpuStart)/float64(b.N), "cpu-ns/rec")
	}

	tot, err := drain.Totals()
	if err != nil {
		b.Fatal(err)
	}
	if want := written * (written - 1) / 2; tot.Records != written || tot.Sum != want {
		b.Fatalf("the kernel took %d records summing to %d, want %d summing to %d", tot.Records, tot.Sum, written, want)
	}
}

// threadCPUTime is the calling thread's CPU time, user and system.
func threadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// writeBatch is how many records the batch modes reserve at once: with
// 16 a batch, two goroutines writing 1 KiB records at once took longer
// than one (AMD EPYC, docs/writer.md); with 64, less.
const writeBatch = 64

// reserveWriter fills each record in place between Reserve (or
// ReserveBatch, with batch > 0) and Submit, from one goroutine or
// several, each writing its share of a round.
//
// The helpers wait for their share spinning: parked on a channel, a
// helper sleeps while the drain runs, and waking its idle vCPU took
// 40-60 µs a round on a KVM guest, as long as the writes of the round
// themselves (docs/writer.md): the writes, not the wake-up, are measured.
type reserveWriter struct {
	w       *ringbuf.Writer
	payload []byte
	batch   int
	errs    []error // of each helper's last share

	first, share uint64        // this round's: helper i writes [first+i*share, +share)
	rounds       atomic.Uint64 // rounds handed to the helpers
	shares       atomic.Uint64 // helper shares written
	stop         atomic.Bool
}

func openReserve(goroutines, batch int) func(*ebpf.Map, []byte) (batchWriter, error) {
	return func(m *ebpf.Map, payload []byte) (batchWriter, error) {
		w, err := ringbuf.NewWriter(m)
		if err != nil {
			return nil, err
		}
		rw := &reserveWriter{w: w, payload: payload, batch: batch, errs: make([]error, goroutines-1)}
		for i := range rw.errs {
			go rw.help(i)
		}
		return rw, nil
	}
}

func (rw *reserveWriter) help(i int) {
	for round := uint64(1); ; round++ {
		for rw.rounds.Load() < round {
			if rw.stop.Load() {
				return
			}
		}
		rw.errs[i] = rw.writeShare(rw.first+uint64(i)*rw.share, int(rw.share))
		rw.shares.Add(1)
	}
}

func (rw *reserveWriter) write(first uint64, count int) error {
	helpers := uint64(len(rw.errs))
	rw.first, rw.share = first, uint64(count)/(helpers+1)
	want := rw.shares.Load() + helpers
	rw.rounds.Add(1)
	mine := helpers * rw.share
	err := rw.writeShare(first+mine, count-int(mine))
	for rw.shares.Load() < want {
	}
	return errors.Join(err, errors.Join(rw.errs...))
}

func (rw *reserveWriter) writeShare(first uint64, count int) error {
	if rw.batch > 0 {
		return rw.writeBatches(first, count)
	}
	for seq := first; seq < first+uint64(count); seq++ {
		r, err := rw.w.Reserve(len(rw.payload))
		if err != nil {
			return err
		}
		copy(r.RawSample, rw.payload)
		binary.NativeEndian.PutUint64(r.RawSample, seq)
		if err := rw.w.Submit(r); err != nil {
			return err
		}
	}
	return nil
}

func (rw *reserveWriter) writeBatches(first uint64, count int) error {
	var rs [writeBatch]ringbuf.Reservation
	for seq, end := first, first+uint64(count); seq < end; {
		k, err := rw.w.ReserveBatch(rs[:min(uint64(rw.batch), end-seq)], len(rw.payload))
		if err != nil {
			return err
		}
		for _, r := range rs[:k] {
			copy(r.RawSample, rw.payload)
			binary.NativeEndian.PutUint64(r.RawSample, seq)
			if err := rw.w.Submit(r); err != nil {
				return err
			}
			seq++
		}
	}
	return nil
}

func (rw *reserveWriter) Close() error {
	rw.stop.Store(true)
	return rw.w.Close()
}

// copyWriter writes each record with Write, from a buffer it numbers.
type copyWriter struct {
	w      *ringbuf.Writer
	record []byte
}

func openWrite(m *ebpf.Map, payload []byte) (batchWriter, error) {
	w, err := ringbuf.NewWriter(m)
	if err != nil {
		return nil, err
	}
	return &copyWriter{w: w, record: append([]byte(nil), payload...)}, nil
}

func (cw *copyWriter) write(first uint64, count int) error {
	for seq := first; seq < first+uint64(count); seq++ {
		binary.NativeEndian.PutUint64(cw.record, seq)
		if _, err := cw.w.Write(cw.record); err != nil {
			return err
		}
	}
	return nil
}

func (cw *copyWriter) Close() error { return cw.w.Close() }

// libbpfWriter: the C peer, one cgo call a round.
type libbpfWriter struct{ *libbpfwrite.Writer }

func openLibbpfWrite(m *ebpf.Map, payload []byte) (batchWriter, error) {
	w, err := libbpfwrite.Open(m, payload)
	if err != nil {
		return nil, err
	}
	return libbpfWriter{w}, nil
}

func (lw libbpfWriter) write(first uint64, count int) error { return lw.Write(first, count) }

// BenchmarkWriteCopyCeiling is what BenchmarkWrite's two goroutines can
// gain at best on the host: the copies alone, without the ring's protocol
// or the kernel's drain. It copies b.N records of each size into memory
// the size of BenchmarkWrite's ring (-ringbuf.writering), where a record
// would lie, from one goroutine or from two at once, each into its own
// half; an op is one record, so ns/op is the time a record took with
// both copying. Where goroutines=2 is no faster than goroutines=1, the
// host's caches take the copies one after the other, and a second writer
// cannot gain by copying in parallel (docs/writer.md).
func BenchmarkWriteCopyCeiling(b *testing.B) {
	sizes, err := drainbench.ParseSizes(*benchSizes)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range sizes {
		for _, goroutines := range []int{1, 2} {
			b.Run(fmt.Sprintf("size=%d/goroutines=%d", size, goroutines), func(b *testing.B) {
				benchCopyCeiling(b, size, goroutines)
			})
		}
	}
}

func benchCopyCeiling(b *testing.B, size, goroutines int) {
	ring := make([]byte, *writeRing)
	payload := make([]byte, size)
	stride := (size + 8 + 7) &^ 7 // a record's place, header included
	share := len(ring) / goroutines
	if share < stride {
		b.Skipf("a ring of %d bytes holds no %d-byte record per goroutine", len(ring), size)
	}
	for i := range ring {
		ring[i] = 1 // mapped before the clock starts
	}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range goroutines {
		records := b.N / goroutines
		if g == 0 {
			records += b.N % goroutines
		}
		mem := ring[g*share : (g+1)*share]
		wg.Go(func() {
			for off := 0; records > 0; records-- {
				if off+stride > len(mem) {
					off = 0
				}
				copy(mem[off+8:off+8+size], payload)
				off += stride
			}
		})
	}
	wg.Wait()
}
