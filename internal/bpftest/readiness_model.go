//go:build linux

package bpftest

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// ModelTarget is a reader under CheckReadinessModel, with its producer.
// Records are named by numbers unique across the reader's buffers.
type ModelTarget struct {
	ReadinessFD func() (int, error)
	// Produce makes n records, each waking a reader where the kernel
	// wakes one, and returns their numbers.
	Produce func(n int) []uint64
	// Read reads one record and returns its number, or the error.
	Read func() (uint64, error)
	// Records ranges over the reader's Records, calling body with each
	// record's number until it returns false, and returns the error that
	// ended the loop, if any.
	Records func(body func(uint64) bool) error
	// Probe is a read that consumes nothing: a Batches loop that breaks
	// at its first batch without touching it. It reports whether a batch
	// came, else returns the error that ended the loop.
	Probe func() (bool, error)
	// Peek and Consume hold and end a view (Reader); nil where there are
	// none.
	Peek    func() (uint64, error)
	Consume func() error

	SetDeadline  func(time.Time)
	Flush, Close func() error
	Flushed      error     // the reader's ErrFlushed
	Before       Resources // taken just before the reader was made
}

// ModelSteps is how many steps a model test takes: $RINGBUF_MODEL_STEPS,
// 1,000 if unset.
func ModelSteps(tb testing.TB) int {
	tb.Helper()
	s := os.Getenv("RINGBUF_MODEL_STEPS")
	if s == "" {
		return 1000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("RINGBUF_MODEL_STEPS=%q: want a positive number", s)
	}
	return n
}

// CheckReadinessModel runs steps random steps on a reader: records
// produced, loops that wait for them, hold them, go on, break or panic,
// reads, a Peek view held and consumed, Flush, deadlines, and at the end
// Close. After every step it checks the readiness descriptor against what
// a read with the deadline passed finds (Probe): readable exactly when
// the read would return records or an error other than the deadline's.
// A descriptor that a kernel's wake-up makes readable may take a moment
// (ReadinessLatency); one that says records wait when a loop waiting
// beside the read took them is no fault. Every record is handed out
// once; nothing leaks. RINGBUF_MODEL_SEED replays a run.
func CheckReadinessModel(t *testing.T, steps int, newTarget func(t *testing.T) ModelTarget) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RINGBUF_MODEL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("RINGBUF_MODEL_SEED=%q: %v", s, err)
		}
	}
	t.Logf("RINGBUF_MODEL_SEED=%d", seed)
	m := &readinessModel{t: t, target: newTarget(t), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		delivered: map[uint64]bool{}, produced: map[uint64]bool{}}
	var err error
	if m.fd, err = m.target.ReadinessFD(); err != nil {
		t.Fatal(err)
	}
	m.check("at the start")
	for step := 0; step < steps && !t.Failed(); step++ {
		m.step(step)
	}
	if !t.Failed() {
		m.finish()
	}
	t.Logf("%d steps: %d records produced, %d delivered, %d loops; %v", steps, len(m.produced), len(m.delivered), m.loopsStarted, m.counts)
}

// readinessModel is CheckReadinessModel's state: what the test knows.
type readinessModel struct {
	t         *testing.T
	target    ModelTarget
	rng       *rand.Rand
	fd        int
	produced  map[uint64]bool
	delivered map[uint64]bool
	loops     []*modelLoop
	peeked    bool
	// producedSince: records were produced since the last check, whose
	// wake-up the reader hears on a goroutine of its own.
	producedSince bool
	loopsStarted  int
	counts        map[string]int
}

// modelLoop is a Records loop in a goroutine of its own, its body held
// until the model says what it does with the record it got.
type modelLoop struct {
	got    chan uint64
	do     chan string // "next", "break", "panic"
	ended  chan error
	inBody bool
	done   bool
}

var errModelPanic = errors.New("the model's panic")

func (m *readinessModel) deliver(seq uint64, how string) {
	m.t.Helper()
	switch {
	case !m.produced[seq]:
		m.t.Fatalf("%s handed out record %d, never produced", how, seq)
	case m.delivered[seq]:
		m.t.Fatalf("%s handed out record %d a second time", how, seq)
	}
	m.delivered[seq] = true
}

func (m *readinessModel) produce(n int) {
	for _, seq := range m.target.Produce(n) {
		m.produced[seq] = true
	}
	m.producedSince = true
}

// startLoop starts a Records loop.
func (m *readinessModel) startLoop() *modelLoop {
	l := &modelLoop{got: make(chan uint64, 1), do: make(chan string), ended: make(chan error, 1)}
	m.loops = append(m.loops, l)
	m.loopsStarted++
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil && r != errModelPanic {
				panic(r)
			} else if r != nil {
				err = errModelPanic
			}
			l.ended <- err
		}()
		err = m.target.Records(func(seq uint64) bool {
			l.got <- seq
			switch <-l.do {
			case "break":
				return false
			case "panic":
				panic(errModelPanic)
			}
			return true
		})
	}()
	return l
}

// waitingLoops returns the loops in progress but not in their bodies.
func (m *readinessModel) waitingLoops() (n int) {
	for _, l := range m.loops {
		if !l.inBody && !l.done {
			n++
		}
	}
	return n
}

// quiesce collects what the loops report until each is in its body,
// has ended, or waits in the reader.
func (m *readinessModel) quiesce() {
	m.t.Helper()
	creator := "github.com/ebpf-zc/ebpf/internal/bpftest.(*readinessModel).startLoop"
	for giveUp := time.Now().Add(10 * time.Second); ; {
		for _, l := range m.loops {
			if l.inBody || l.done {
				continue
			}
			select {
			case seq := <-l.got:
				l.inBody = true
				m.deliver(seq, "a loop")
			case err := <-l.ended:
				l.done = true
				m.endedWith(err)
			default:
			}
		}
		alive := 0
		for _, l := range m.loops {
			if !l.done {
				alive++
			}
		}
		// Loops in their bodies wait for the model; the others in the
		// reader.
		if len(WaitingGoroutines(creator)) >= alive {
			time.Sleep(200 * time.Microsecond) // one more look for late reports
			settled := true
			for _, l := range m.loops {
				if !l.inBody && !l.done && (len(l.got) > 0 || len(l.ended) > 0) {
					settled = false
				}
			}
			if settled {
				return
			}
			continue
		}
		if time.Now().After(giveUp) {
			m.t.Fatalf("loops still running after 10 s: %d alive, %d waiting", alive, len(WaitingGoroutines(creator)))
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// endedWith checks the error a loop ended with.
func (m *readinessModel) endedWith(err error) {
	m.t.Helper()
	switch {
	case err == nil, errors.Is(err, errModelPanic), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, os.ErrClosed), errors.Is(err, m.target.Flushed):
	default:
		m.t.Fatalf("a loop ended with %v", err)
	}
}

// withDeadlinePassed runs fn with the reader's deadline passed, then
// lifts it.
func (m *readinessModel) withDeadlinePassed(fn func()) {
	m.target.SetDeadline(time.Now())
	fn()
	m.target.SetDeadline(time.Time{})
}

// check compares the descriptor with a probe, once the loops are quiet.
func (m *readinessModel) check(after string) {
	m.t.Helper()
	m.quiesce()
	readable := Readable(m.t, m.fd)
	if !readable && m.producedSince {
		// The kernel's wake-up reaches the descriptor through a goroutine.
		for deadline := time.Now().Add(ReadinessLatency / 4); !readable && time.Now().Before(deadline); {
			time.Sleep(200 * time.Microsecond)
			readable = Readable(m.t, m.fd)
		}
	}
	m.producedSince = false
	waiting := m.waitingLoops()
	var batch bool
	var err error
	m.withDeadlinePassed(func() { batch, err = m.target.Probe() })
	truth := batch || (err != nil && !errors.Is(err, os.ErrDeadlineExceeded))
	switch {
	case truth && !readable:
		m.t.Fatalf("after %s: a read finds %s, and the descriptor is not readable", after, found(batch, err))
	case !truth && readable && waiting > 0:
		// A loop waiting beside the probe may have taken the records.
		before := len(m.delivered)
		m.quiesce()
		if len(m.delivered) == before {
			m.t.Fatalf("after %s: the descriptor is readable, and a read finds %s; no loop took anything", after, found(batch, err))
		}
	case !truth && readable:
		m.t.Fatalf("after %s: the descriptor is readable, and a read finds %s", after, found(batch, err))
	}
	m.quiesce()
}

func found(batch bool, err error) string {
	if batch {
		return "records"
	}
	return fmt.Sprintf("nothing (%v)", err)
}

// inBody returns the loops in their bodies.
func (m *readinessModel) inBody() []*modelLoop {
	var in []*modelLoop
	for _, l := range m.loops {
		if l.inBody && !l.done {
			in = append(in, l)
		}
	}
	return in
}

// step takes one random step, then checks.
func (m *readinessModel) step(step int) {
	m.t.Helper()
	kinds := []string{"produce", "produce", "wait-and-produce", "loop", "body", "body", "read", "flush", "deadline"}
	if m.target.Peek != nil {
		kinds = append(kinds, "peek", "peek")
	}
	kind := kinds[m.rng.IntN(len(kinds))]
	what := kind
	switch kind {
	case "produce":
		m.produce(1 + m.rng.IntN(3))
	case "wait-and-produce":
		// A loop that waits in the reader takes the kernel's wake-up.
		if len(m.loops) < 4 {
			m.startLoop()
		}
		m.quiesce()
		m.produce(1 + m.rng.IntN(3))
	case "loop":
		if len(m.inBody())+m.waitingLoops() < 4 {
			m.startLoop()
		}
	case "body":
		in := m.inBody()
		if len(in) == 0 {
			m.produce(1)
			what = "produce"
			break
		}
		l := in[m.rng.IntN(len(in))]
		do := []string{"next", "next", "break", "panic"}[m.rng.IntN(4)]
		what = "a loop body's " + do
		l.inBody = false
		l.do <- do
	case "read":
		m.readOnce("a read", m.target.Read)
	case "peek":
		if m.peeked {
			what = "Consume"
			if err := m.target.Consume(); err != nil {
				m.t.Fatalf("step %d: Consume: %v", step, err)
			}
			m.peeked = false
			break
		}
		m.peeked = m.readOnce("a Peek", m.target.Peek)
	case "flush":
		if err := m.target.Flush(); err != nil {
			m.t.Fatal(err)
		}
	case "deadline":
		// Waiting loops end with the deadline.
		m.withDeadlinePassed(func() {})
	}
	if m.counts == nil {
		m.counts = map[string]int{}
	}
	m.counts[kind]++
	m.check(fmt.Sprintf("step %d (%s)", step, what))
}

// readOnce reads with the deadline passed and books the record, if one
// came; a read that finds nothing ends with the deadline or a flush.
func (m *readinessModel) readOnce(how string, read func() (uint64, error)) (got bool) {
	m.t.Helper()
	var seq uint64
	var err error
	m.withDeadlinePassed(func() { seq, err = read() })
	switch {
	case err == nil:
		m.deliver(seq, how)
		return true
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, m.target.Flushed):
		return false
	}
	m.t.Fatalf("%s: %v", how, err)
	return false
}

// ModelRecords is a ModelTarget's Records over a reader's loop, key
// naming each record.
func ModelRecords[R any](loop iter.Seq2[*R, error], key func(*R) uint64) func(body func(uint64) bool) error {
	return func(body func(uint64) bool) error {
		for rec, err := range loop {
			if err != nil {
				return err
			}
			if !body(key(rec)) {
				return nil
			}
		}
		return errors.New("the loop ended without an error")
	}
}

// ModelProbe is a ModelTarget's Probe over a reader's Batches loop.
func ModelProbe[B any](batches iter.Seq2[B, error]) func() (bool, error) {
	return func() (bool, error) {
		for _, err := range batches {
			return err == nil, err
		}
		return false, errors.New("the loop ended without an error")
	}
}

// finish either closes the reader while loop bodies and a view still
// hold records, checking the descriptor says so, or drains every record
// first and checks each was handed out once; then that nothing leaked.
func (m *readinessModel) finish() {
	m.t.Helper()
	if m.rng.IntN(2) == 0 {
		if err := m.target.Close(); err != nil {
			m.t.Fatal(err)
		}
		if len(m.inBody()) > 0 || m.peeked {
			if !Readable(m.t, m.fd) {
				m.t.Fatal("closed, with records held, and the descriptor is not readable")
			}
		}
		m.release()
		CheckNoLeaks(m.t, m.target.Before, "a reader closed with records held")
		return
	}
	m.release()
	m.withDeadlinePassed(func() {
		for {
			seq, err := m.target.Read()
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, m.target.Flushed) {
					m.t.Fatalf("draining: %v", err)
				}
				if errors.Is(err, os.ErrDeadlineExceeded) {
					return
				}
				continue // a flush pending: the next read drains on
			}
			m.deliver(seq, "the drain")
		}
	})
	if len(m.delivered) != len(m.produced) {
		m.t.Fatalf("%d records produced, %d handed out once drained: lost some", len(m.produced), len(m.delivered))
	}
	if err := m.target.Close(); err != nil {
		m.t.Fatal(err)
	}
	CheckNoLeaks(m.t, m.target.Before, "a closed reader")
}

// release breaks every loop body, ends every waiting loop with the
// deadline, and consumes a view.
func (m *readinessModel) release() {
	m.t.Helper()
	if m.peeked {
		if err := m.target.Consume(); err != nil {
			m.t.Fatal(err)
		}
		m.peeked = false
	}
	m.withDeadlinePassed(func() {
		for _, l := range m.loops {
			if l.inBody {
				l.inBody = false
				l.do <- "break"
			}
			for !l.done {
				select {
				case seq := <-l.got: // woken by the deadline, it took records first
					m.deliver(seq, "a loop")
					l.do <- "break"
				case err := <-l.ended:
					l.done = true
					m.endedWith(err)
				case <-time.After(10 * time.Second):
					m.t.Fatal("a loop, broken or past its deadline, still runs after 10 s")
				}
			}
		}
	})
}
