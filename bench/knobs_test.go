//go:build linux

package bench

import (
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
	"github.com/ebpf-zc/ebpf/internal/benchknob"
)

// The benchmarks' settings (knobs) are declared, with their defaults and
// what they do, in their family's description (internal/benchfamily);
// these read one, failing the benchmark on a malformed value.

func knob(t testing.TB, env string) benchknob.Knob {
	t.Helper()
	k, err := benchfamily.Lookup(env)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func knobInt(t testing.TB, env string) int {
	t.Helper()
	n, err := knob(t, env).Int()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func knobInts(t testing.TB, env string) []int {
	t.Helper()
	ns, err := knob(t, env).Ints()
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func knobDuration(t testing.TB, env string) time.Duration {
	t.Helper()
	d, err := knob(t, env).Duration()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func knobText(t testing.TB, env string) string {
	t.Helper()
	s, err := knob(t, env).Text()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// smokeRun reports whether the benchmarks run with an iteration count
// above one (-benchtime 100x), which only make test's smoke run asks of
// them: a timed row then runs for a moment.
func smokeRun() bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return false
	}
	v := f.Value.String()
	n, err := strconv.Atoi(strings.TrimSuffix(v, "x"))
	return strings.HasSuffix(v, "x") && err == nil && n > 1
}
