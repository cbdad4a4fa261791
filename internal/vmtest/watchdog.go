package vmtest

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultWatchdog is how long a guest may show no sign of life (console
// output or heartbeat) before the host stops it. Booting prints kernel
// messages without pause and the init beats every second once it runs,
// so a live guest stays far below it even under TCG; a guest stopped by
// its accelerator or a hung kernel is given up on after this, not after
// the host timeout.
const DefaultWatchdog = 30 * time.Second

// lifeSigns tracks when a guest last showed a sign of life: a console
// read, or the heartbeat file growing.
type lifeSigns struct {
	start     time.Time
	heartbeat string

	mu      sync.Mutex
	last    time.Time
	longest time.Duration
	// longestEnd is when the longest silence ended, since start.
	longestEnd time.Duration
	beats      int64
	booted     bool
}

// markBooted notes that the init's BOOTED marker came.
func (l *lifeSigns) markBooted() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.booted = true
}

// notBootedBy says the guest has not booted and deadline has passed.
func (l *lifeSigns) notBootedBy(now time.Time, deadline time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.booted && now.Sub(l.start) >= deadline
}

func newLifeSigns(start time.Time, heartbeat string) *lifeSigns {
	return &lifeSigns{start: start, heartbeat: heartbeat, last: start}
}

// saw notes a sign of life at now.
func (l *lifeSigns) saw(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gap := now.Sub(l.last); gap > l.longest {
		l.longest, l.longestEnd = gap, now.Sub(l.start)
	}
	l.last = now
}

// silence is how long the guest has been silent at now.
func (l *lifeSigns) silence(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Sub(l.last)
}

// longestSilence is the longest silence so far, the current one
// included, and when it ended (since start).
func (l *lifeSigns) longestSilence() (time.Duration, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Since(l.start); now-l.last.Sub(l.start) > l.longest {
		return now - l.last.Sub(l.start), now
	}
	return l.longest, l.longestEnd
}

// watch returns r, noting a sign of life at every read that returns bytes.
func (l *lifeSigns) watch(r io.Reader) io.Reader { return signReader{r, l} }

type signReader struct {
	r io.Reader
	l *lifeSigns
}

// Read implements io.Reader.
func (s signReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.l.saw(time.Now())
	}
	return n, err
}

// checkHeartbeat notes a sign of life when the heartbeat file has grown.
func (l *lifeSigns) checkHeartbeat(now time.Time) {
	if l.heartbeat == "" {
		return
	}
	fi, err := os.Stat(l.heartbeat)
	if err != nil || fi.Size() <= l.beats {
		return
	}
	l.beats = fi.Size()
	l.saw(now)
}

// guard stops the VM through stop once the guest has been silent for
// watchdog (cause errSilent) or has not booted by bootDeadline (cause
// errNoBoot); a zero value turns either check off. It returns then or
// when ctx ends, and closes done on return.
func (l *lifeSigns) guard(ctx context.Context, watchdog, bootDeadline time.Duration, stop context.CancelCauseFunc, done chan<- struct{}) {
	defer close(done)
	step := 250 * time.Millisecond
	for _, d := range []time.Duration{watchdog, bootDeadline} {
		if d > 0 {
			step = min(step, d/10)
		}
	}
	tick := time.NewTicker(step)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			l.checkHeartbeat(now)
			switch {
			case watchdog > 0 && l.silence(now) >= watchdog:
				stop(errSilent)
				return
			case bootDeadline > 0 && l.notBootedBy(now, bootDeadline):
				stop(errNoBoot)
				return
			}
		}
	}
}

// kvmErrorMarker starts QEMU's report of a KVM exit it cannot handle
// ("KVM internal error. Suberror: %d" in accel/kvm/kvm-all.c); QEMU then
// pauses the guest and waits, so the VM is stopped at once.
const kvmErrorMarker = "KVM internal error"

// kvmErrorWatch keeps QEMU's stderr and calls found the first time it
// holds a KVM internal error.
type kvmErrorWatch struct {
	found func()

	mu    sync.Mutex
	buf   bytes.Buffer
	fired bool
}

// Write implements io.Writer.
func (w *kvmErrorWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.fired && bytes.Contains(w.buf.Bytes(), []byte(kvmErrorMarker)) {
		w.fired = true
		if w.found != nil {
			w.found()
		}
	}
	return len(p), nil
}

func (w *kvmErrorWatch) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// KVMInternalError sums up a KVM internal error in QEMU's stderr in one
// line, "KVM internal error. Suberror: 1 (emulation failure)", or returns
// "" when there is none. The reason is the first line after the error
// that is neither extra data nor a register dump.
func KVMInternalError(stderr string) string {
	i := strings.Index(stderr, kvmErrorMarker)
	if i < 0 {
		return ""
	}
	lines := strings.Split(stderr[i:], "\n")
	head := strings.TrimSpace(lines[0])
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "extra data") {
			continue
		}
		if !strings.Contains(l, "=") {
			head += " (" + l + ")"
		}
		break
	}
	return head
}
