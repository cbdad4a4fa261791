package perf

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"syscall"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/epoll"
)

// ReaderOptions control the perf events a Reader opens, as cilium/ebpf's.
type ReaderOptions struct {
	// WakeupEvents is the number of records in a CPU's buffer that wake a
	// waiting read; zero lets Watermark decide.
	WakeupEvents int
	// Watermark is the number of bytes in a CPU's buffer, less than its
	// size, that wake a waiting read; zero wakes for every record.
	Watermark int
	// Overwritable makes every buffer a ring the kernel overwrites when
	// full, read only paused, newest first, each record once.
	Overwritable bool
}

// Reader reads what BPF programs write to a BPF_MAP_TYPE_PERF_EVENT_ARRAY,
// a buffer per online CPU. Every method may be called from any goroutine
// at any time; Read, ReadInto, Records and Batches by several at once.
type Reader struct {
	buffers
	reads readInto // ReadInto's, under the engine's lock
}

// NewReader creates a Reader with default options. perCPUBuffer is each
// CPU's buffer in bytes, rounded up to a power-of-two number of pages.
func NewReader(array *ebpf.Map, perCPUBuffer int) (*Reader, error) {
	return NewReaderWithOptions(array, perCPUBuffer, ReaderOptions{})
}

// NewReaderWithOptions opens a perf event on every online CPU (the
// array's keys), maps its buffer and puts it in the array.
func NewReaderWithOptions(array *ebpf.Map, perCPUBuffer int, opts ReaderOptions) (*Reader, error) {
	return newReader(array, perCPUBuffer, opts, -1)
}

// NewCPUReader is [NewReaderWithOptions] for the buffer of cpu alone, as
// libbpf's perf_buffer__consume_buffer: Readers of different CPUs share no
// lock, and Close removes only its entry. An offline CPU is an error.
func NewCPUReader(array *ebpf.Map, cpu, perCPUBuffer int, opts ReaderOptions) (*Reader, error) {
	if cpu < 0 {
		return nil, fmt.Errorf("perf: CPU %d", cpu)
	}
	return newReader(array, perCPUBuffer, opts, cpu)
}

// newReader opens every online CPU (cpu -1), or cpu alone.
func newReader(array *ebpf.Map, perCPUBuffer int, opts ReaderOptions, cpu int) (*Reader, error) {
	if err := supported(); err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	switch {
	case array == nil:
		return nil, errors.New("perf: nil map")
	case array.FD() < 0: // before its type, which a closed Map still reports
		return nil, fmt.Errorf("perf: map %v is closed: its file descriptor: %w", array, syscall.EBADF)
	case array.Type() != ebpf.PerfEventArray:
		return nil, fmt.Errorf("perf: map type %s is not %s", array.Type(), ebpf.PerfEventArray)
	case perCPUBuffer < 1:
		return nil, errors.New("perf: perCPUBuffer must be larger than 0")
	case uint64(opts.WakeupEvents) > math.MaxUint32 || uint64(opts.Watermark) > math.MaxUint32: // a u32 in perf_event_attr
		return nil, errors.New("perf: WakeupEvents and Watermark must be between 0 and 2^32-1")
	case opts.WakeupEvents > 0 && opts.Watermark > 0:
		return nil, errors.New("perf: WakeupEvents and Watermark cannot both be non-zero")
	case opts.Watermark >= perCPUBuffer:
		return nil, errors.New("perf: Watermark must be smaller than perCPUBuffer")
	case uint64(perCPUBuffer) > maxDataPages*uint64(os.Getpagesize()):
		return nil, fmt.Errorf("perf: perCPUBuffer %d is not between 1 and %d", perCPUBuffer, maxDataPages*uint64(os.Getpagesize()))
	case uint64(dataPages(perCPUBuffer)+1)*uint64(os.Getpagesize()) > math.MaxInt: // a 32-bit process
		return nil, fmt.Errorf("perf: perCPUBuffer %d rounds up to more than this process can map", perCPUBuffer)
	case cpu >= int(array.MaxEntries()):
		return nil, fmt.Errorf("perf: CPU %d: the array has %d entries", cpu, array.MaxEntries())
	}
	res, bufs, err := openEvents(array, dataPages(perCPUBuffer), opts, cpu)
	if err != nil {
		return nil, fmt.Errorf("perf: %w", errors.Join(err, res.free()))
	}
	r := &Reader{}
	if err = r.init(bufs, res, opts.Overwritable); err == nil {
		err = res.putEntries(true)
	}
	if err != nil { // entries put would outlive us in the caller's map
		return nil, fmt.Errorf("perf: %w", errors.Join(err, res.putEntries(false), res.free()))
	}
	return r, nil
}

const maxDataPages = 1 << 30 // rb_alloc's int (kernel/events/ring_buffer.c)

// dataPages is the power of two of pages holding perCPUBuffer (perf_mmap).
func dataPages(perCPUBuffer int) int {
	page := uint64(os.Getpagesize())
	return 1 << bits.Len64((uint64(perCPUBuffer)+page-1)/page-1)
}

// openEvents opens, maps and polls the event of every online CPU, or of
// only (unless -1); on error, res holds what it opened.
func openEvents(array *ebpf.Map, pages int, opts ReaderOptions, only int) (*resources, []*buffer, error) {
	res, bufs := &resources{}, []*buffer(nil)
	var err error
	if res.poller, err = epoll.New(); err != nil {
		return res, nil, err
	}
	for cpu := range int(array.MaxEntries()) {
		if only >= 0 && cpu != only {
			continue
		}
		fd, err := openEvent(cpu, opts.WakeupEvents, opts.Watermark, opts.Overwritable)
		if errOffline(err) && only < 0 {
			continue
		}
		if err != nil {
			return res, nil, err
		}
		res.fds, res.cpus = append(res.fds, fd), append(res.cpus, cpu)
		m, buf, err := mapEvent(fd, pages, opts.Overwritable)
		if err != nil {
			return res, nil, fmt.Errorf("CPU %d: %w", cpu, err)
		}
		res.mappings, bufs = append(res.mappings, m), append(bufs, buf)
		if err := res.poller.AddEdgeTriggered(fd); err != nil {
			return res, nil, err
		}
	}
	if len(bufs) == 0 {
		return res, nil, fmt.Errorf("no online CPU among the array's %d entries", array.MaxEntries())
	}
	// The entries go with the map file's last fd (perf_event_fd_array_release).
	res.array, err = array.Clone()
	return res, bufs, err
}

// BufferSize returns the size in bytes of each CPU's buffer.
func (r *Reader) BufferSize() int { return int(r.consumers[0].buf.size) }

// SetDeadline sets when blocked reads and loops give up with
// os.ErrDeadlineExceeded, after the records in the buffers.
func (r *Reader) SetDeadline(t time.Time) { r.engine.SetDeadline(t) }

// Flush makes every read and loop in progress return the records in the
// buffers, those below Watermark or WakeupEvents too, then [ErrFlushed].
func (r *Reader) Flush() error { return r.engine.Flush() }

// Pause removes the Reader's events from the array: BPF programs' writes
// fail with ENOENT until Resume. An overwritable Reader is read paused.
func (r *Reader) Pause() error { return r.setPaused(true, "pause") }

// Resume puts the Reader's events back in the array, undoing Pause. On an
// overwritable Reader it fails, changing nothing, while a loop body holds
// records (the kernel would write over them), and drops what the last
// read left unread, which the kernel may write over.
func (r *Reader) Resume() error { return r.setPaused(false, "resume") }

// Close is ringbuf.Reader.Close; BPF programs' writes fail with ENOENT
// from then on.
func (r *Reader) Close() error { return r.engine.Close(r.removeEntries) }

// ReadinessFD returns a descriptor readable exactly while a read with the
// deadline passed would return at once, as ringbuf.Reader.ReadinessFD and
// libbpf's perf_buffer__epoll_fd, with the same lifetime: the caller never
// closes it; -1 and [ErrClosed] once closed. Records below WakeupEvents or
// Watermark show once something else wakes or reads the Reader.
func (r *Reader) ReadinessFD() (int, error) {
	fd, err := r.engine.ReadinessFD()
	if err != nil {
		return -1, fmt.Errorf("perf: readiness descriptor: %w", err)
	}
	return fd, nil
}
