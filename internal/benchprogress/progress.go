// Package benchprogress shows how far a benchmark run is: results done
// of the total planned, the time spent and the time left, on one line
// redrawn in place on a terminal and as a plain line every half minute
// elsewhere (CI logs). Lines holds go test's output as it comes: every
// line goes on to the results file, each result counts, and what is
// neither a result nor go test's framing (a skip, a failure) is shown
// once.
//
//	p := benchprogress.New(os.Stdout, "make bench", 384, 3*time.Minute)
//	defer p.Finish()
//	cmd.Stdout = p.Lines(resultsFile)
package benchprogress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress counts results against a plan and shows it.
type Progress struct {
	mu       sync.Mutex
	stop     chan struct{}
	w        io.Writer
	title    string
	total    int
	estimate time.Duration
	start    time.Time
	done     int
	terminal bool
	lastLine time.Time
	drawn    bool
	shown    map[string]bool
}

// New starts showing progress on w towards total results, which the plan
// says take about estimate. Call Finish when the run ends.
func New(w io.Writer, title string, total int, estimate time.Duration) *Progress {
	p := &Progress{
		w: w, title: title, total: total, estimate: estimate,
		start: time.Now(), lastLine: time.Now(),
		terminal: isTerminal(w),
		stop:     make(chan struct{}),
		shown:    map[string]bool{},
	}
	go p.tick()
	return p
}

// isTerminal reports whether w is a character device, as a terminal is:
// the redrawn line there, plain lines into files and pipes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// tick redraws the line every second on a terminal, so elapsed time moves
// while a long row runs, and prints one every 30 s elsewhere.
func (p *Progress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.terminal {
				p.draw()
			} else if time.Since(p.lastLine) >= 30*time.Second {
				p.lastLine = time.Now()
				fmt.Fprintln(p.w, p.line())
			}
			p.mu.Unlock()
		}
	}
}

// Result counts one result.
func (p *Progress) Result() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.done > p.total {
		// More than planned (a mode the plan does not know): the run's
		// end is not known, so the total follows what has been seen.
		p.total = p.done
	}
	if p.terminal {
		p.draw()
	}
}

// left is the time still to go: the plan's estimate until a few results
// are in, then what they took, scaled to what remains.
func (p *Progress) left() time.Duration {
	elapsed := time.Since(p.start)
	if p.done == 0 || p.total == 0 {
		return max(p.estimate-elapsed, 0)
	}
	perResult := elapsed / time.Duration(p.done)
	if p.done < 5 {
		perResult = (perResult + p.estimate/time.Duration(p.total)) / 2
	}
	return perResult * time.Duration(p.total-p.done)
}

func (p *Progress) line() string {
	return fmt.Sprintf("%s: %d/%d results, %s elapsed, about %s left", p.title, p.done, p.total,
		time.Since(p.start).Round(time.Second), p.left().Round(time.Second))
}

func (p *Progress) draw() {
	fmt.Fprintf(p.w, "\r\033[K%s", p.line())
	p.drawn = true
}

// Say prints line above the progress line.
func (p *Progress) Say(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, line)
	if p.terminal {
		p.draw()
	}
}

// Finish stops the updates and says how many results took how long.
func (p *Progress) Finish() {
	close(p.stop)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s: %d results in %s\n", p.title, p.done, time.Since(p.start).Round(time.Second))
}

// Lines returns a writer for go test's output: each line goes to
// results, each result line counts, and other lines that are not go
// test's framing are shown once (a skip repeats each run).
func (p *Progress) Lines(results io.Writer) io.Writer {
	return &lineWriter{p: p, results: results}
}

type lineWriter struct {
	p       *Progress
	results io.Writer
	partial []byte
}

func (lw *lineWriter) Write(b []byte) (int, error) {
	if _, err := lw.results.Write(b); err != nil {
		return 0, err
	}
	lw.partial = append(lw.partial, b...)
	for {
		i := strings.IndexByte(string(lw.partial), '\n')
		if i < 0 {
			break
		}
		lw.line(string(lw.partial[:i]))
		lw.partial = lw.partial[i+1:]
	}
	return len(b), nil
}

func (lw *lineWriter) line(line string) {
	switch {
	case IsResult(line):
		lw.p.Result()
	case IsFraming(line):
	default:
		key := strings.TrimSpace(line)
		if i := strings.Index(key, ": "); strings.HasPrefix(key, "---") && i > 0 {
			key = key[:i]
		}
		lw.p.mu.Lock()
		seen := lw.p.shown[key]
		lw.p.shown[key] = true
		lw.p.mu.Unlock()
		if !seen {
			lw.p.Say(line)
		}
	}
}

// IsResult reports whether line is a benchmark result: a name, then an
// iteration count.
func IsResult(line string) bool {
	fields := strings.Fields(line)
	if len(fields) < 3 || !strings.HasPrefix(fields[0], "Benchmark") {
		return false
	}
	return strings.Trim(fields[1], "0123456789") == ""
}

// IsFraming reports whether line is go test's own framing (PASS, ok), or
// a configuration line (key: value) that benchstat reads from the file.
func IsFraming(line string) bool {
	if line == "PASS" || strings.HasPrefix(line, "ok  \t") {
		return true
	}
	key, _, ok := strings.Cut(line, ": ")
	return ok && key != "" && !strings.ContainsAny(key, " \t") && key == strings.ToLower(key)
}

// DrainCost is what one result of the ring drain benchmark (BenchmarkRead
// and bench-upstream's copy of it) costs on the reference host at
// benchtime: 0.46 s at 50ms and 1.31 s at 200ms, untimed fills and
// ramp-up included.
func DrainCost(benchtime time.Duration) time.Duration {
	return 175*time.Millisecond + benchtime*57/10
}
