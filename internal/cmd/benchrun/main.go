//go:build linux

// Command benchrun runs the go test commands of a make bench target: it
// says first how many results they will give and about how long that
// takes, writes their raw output to the results file, and shows how far
// along they are while they run, one line updated in place on a terminal
// and a plain line every half minute elsewhere (CI logs).
//
//	benchrun -out results/ringbuf.txt -title "make bench" -- \
//		go test -run '^$' -bench 'BenchmarkRead$' -count 6 ./ringbuf/ \
//		--- go test -run '^$' -bench 'BenchmarkEndToEnd$' -count 6 ./ringbuf/
//
// Commands are separated by "---" and run one after the other; each may
// start with a wrapper such as taskset. The results file starts with a
// "kernel:" line, which benchstat prints above its tables and benchplot
// in its plots' footer, beside go test's cpu line.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	out := flag.String("out", "", "results file to write (required)")
	title := flag.String("title", "benchrun", "what the announcement and progress lines start with")
	estimateOnly := flag.Bool("estimate", false, "announce the plan and stop")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchrun -out file [-title text] -- command args... [--- command args...]")
		os.Exit(2)
	}
	if err := run(*out, *title, splitCommands(flag.Args()), *estimateOnly); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *title, err)
		os.Exit(1)
	}
}

// splitCommands splits the arguments at each "---".
func splitCommands(args []string) [][]string {
	var cmds [][]string
	for len(args) > 0 {
		i := slices.Index(args, "---")
		if i < 0 {
			i = len(args)
		}
		if i > 0 {
			cmds = append(cmds, args[:i])
		}
		args = args[min(i+1, len(args)):]
	}
	return cmds
}

func run(out, title string, cmds [][]string, estimateOnly bool) error {
	var total plan
	for _, cmd := range cmds {
		args, err := parseGoTest(cmd)
		if err != nil {
			return fmt.Errorf("%q: %w", strings.Join(cmd, " "), err)
		}
		pl := planFor(args)
		total.results += pl.results
		total.cost += pl.cost
		total.lines = append(total.lines, pl.lines...)
	}
	fmt.Printf("%s: %d results, about %s of benchmarks on the reference host (2-vCPU KVM guest, AMD EPYC); more on a loaded one\n",
		title, total.results, roundDuration(total.cost))
	for _, line := range total.lines {
		fmt.Printf("%s:   %s\n", title, line)
	}
	fmt.Printf("%s: raw results in %s\n", title, out)
	if estimateOnly {
		return nil
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	var uname unix.Utsname
	if err := unix.Uname(&uname); err == nil {
		fmt.Fprintf(f, "kernel: %s\n", unix.ByteSliceToString(uname.Release[:]))
	}
	prog := newProgress(os.Stdout, title, total.results, total.cost)
	defer prog.finish()
	for _, cmd := range cmds {
		if err := runOne(cmd, f, prog); err != nil {
			return err
		}
	}
	return f.Sync()
}

// runOne runs one command, its output (stdout and stderr) to the results
// file, result lines counted, and everything that is neither a result
// nor go test's own framing shown to the person waiting: skips, failures,
// build errors.
func runOne(args []string, results io.Writer, prog *progress) error {
	cmd := exec.Command(args[0], args[1:]...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return err
	}
	pw.Close()
	shown := map[string]bool{}
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(results, line)
		switch {
		case isResult(line):
			prog.result()
		case isFraming(line):
		default:
			// A skip repeats once a run: say it once.
			key := strings.TrimSpace(line)
			if i := strings.Index(key, ": "); strings.HasPrefix(key, "---") && i > 0 {
				key = key[:i]
			}
			if !shown[key] {
				shown[key] = true
				prog.say(line)
			}
		}
	}
	pr.Close()
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%s failed (%v); its output is in the results file", args[0], err)
		}
		return err
	}
	return sc.Err()
}

// isResult reports whether line is a benchmark result: a name, then an
// iteration count.
func isResult(line string) bool {
	fields := strings.Fields(line)
	if len(fields) < 3 || !strings.HasPrefix(fields[0], "Benchmark") {
		return false
	}
	for _, c := range fields[1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isFraming reports whether line is go test's own framing, or a
// configuration line (key: value) that benchstat reads from the file.
func isFraming(line string) bool {
	if line == "PASS" || strings.HasPrefix(line, "ok  \t") {
		return true
	}
	key, _, ok := strings.Cut(line, ": ")
	return ok && key != "" && !strings.ContainsAny(key, " \t") && key == strings.ToLower(key)
}

// progress shows done/total, the time spent and the time left: on a
// terminal redrawn every second and at each result, elsewhere a line
// every half minute.
type progress struct {
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
}

func newProgress(w *os.File, title string, total int, estimate time.Duration) *progress {
	_, err := unix.IoctlGetTermios(int(w.Fd()), unix.TCGETS)
	p := &progress{w: w, title: title, total: total, estimate: estimate, start: time.Now(), terminal: err == nil,
		lastLine: time.Now(), stop: make(chan struct{})}
	go p.tick()
	return p
}

func (p *progress) tick() {
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

func (p *progress) result() {
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

// left is the time still to go: the plan's estimate scaled by how this
// run has gone so far, once it has gone far enough to say.
func (p *progress) left() time.Duration {
	elapsed := time.Since(p.start)
	if p.done == 0 || p.total == 0 {
		return max(p.estimate-elapsed, 0)
	}
	perResult := elapsed / time.Duration(p.done)
	if p.done < 5 {
		// Too few to say: lean on the estimate.
		perResult = (perResult + p.estimate/time.Duration(p.total)) / 2
	}
	return perResult * time.Duration(p.total-p.done)
}

func (p *progress) line() string {
	return fmt.Sprintf("%s: %d/%d results, %s elapsed, about %s left", p.title, p.done, p.total,
		time.Since(p.start).Round(time.Second), p.left().Round(time.Second))
}

func (p *progress) draw() {
	fmt.Fprintf(p.w, "\r\033[K%s", p.line())
	p.drawn = true
}

// say prints line above the progress line.
func (p *progress) say(line string) {
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

func (p *progress) finish() {
	close(p.stop)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s: %d results in %s\n", p.title, p.done, time.Since(p.start).Round(time.Second))
}
