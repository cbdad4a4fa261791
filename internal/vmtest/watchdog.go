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

// guard calls onSilent once the guest has been silent for watchdog, and
// returns then or when ctx ends; it closes done on return.
func (l *lifeSigns) guard(ctx context.Context, watchdog time.Duration, onSilent func(), done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(min(watchdog/10, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			l.checkHeartbeat(now)
			if l.silence(now) >= watchdog {
				onSilent()
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
