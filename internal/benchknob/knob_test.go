package benchknob

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestParse reads each kind from the environment and from its default,
// and checks that a malformed value is an error naming the variable.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		knob  Knob
		env   string // "" for the default
		want  string // the value, printed
		fails bool
	}{
		{Knob{Env: "BENCHKNOB_TEST", Kind: Int, Default: "4096"}, "", "4096", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Int, Default: "4096"}, " 12 ", "12", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Int, Default: "4096"}, "64M", "", true},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Ints, Default: "0,1,2,4"}, "", "[0 1 2 4]", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Ints, Default: "0,1,2,4"}, "1, 64", "[1 64]", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Ints, Default: "0,1,2,4"}, "1,,2", "", true},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Duration, Default: "2s"}, "", "2s", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Duration, Default: "2s"}, "200ms", "200ms", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Duration, Default: "2s"}, "2", "", true},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Duration, Default: "2s"}, "-1s", "", true},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Sizes, Default: "16,4096"}, "", "[16 4096]", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Sizes, Default: "16,4096"}, "12", "", true},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Text, Default: ""}, "generic", "generic", false},
		{Knob{Env: "BENCHKNOB_TEST", Kind: Ints, Default: "1, 2 and every CPU", Compute: func() string { return "1,2" }}, "", "[1 2]", false},
	} {
		t.Setenv("BENCHKNOB_TEST", tc.env)
		var got any
		var err error
		switch tc.knob.Kind {
		case Int:
			got, err = tc.knob.Int()
		case Ints:
			got, err = tc.knob.Ints()
		case Duration:
			var d time.Duration
			d, err = tc.knob.Duration()
			got = d.String()
		case Sizes:
			got, err = tc.knob.Sizes()
		case Text:
			got, err = tc.knob.Text()
		}
		if check := tc.knob.Check(); (check != nil) != (err != nil) {
			t.Errorf("%s=%q: Check says %v, the read %v", tc.knob.Env, tc.env, check, err)
		}
		switch {
		case tc.fails && (err == nil || !strings.Contains(err.Error(), "BENCHKNOB_TEST=")):
			t.Errorf("%s %q: got %v, %v; want an error naming the variable", tc.knob.Kind, tc.env, got, err)
		case !tc.fails && (err != nil || fmt.Sprint(got) != tc.want):
			t.Errorf("%s %q: got %v, %v; want %s", tc.knob.Kind, tc.env, got, err, tc.want)
		}
	}
}

// TestKindMismatch checks that a knob read as another kind is an error,
// not a silent parse.
func TestKindMismatch(t *testing.T) {
	k := Knob{Env: "BENCHKNOB_TEST", Kind: Ints, Default: "1,2"}
	if _, err := k.Int(); err == nil {
		t.Error("a list read as an integer")
	}
	if n, err := k.Count(); err != nil || n != 2 {
		t.Errorf("Count: %d, %v", n, err)
	}
}

// TestBadDefault checks that a malformed default says it is the default.
func TestBadDefault(t *testing.T) {
	t.Setenv("BENCHKNOB_TEST", "")
	err := Knob{Env: "BENCHKNOB_TEST", Kind: Int, Default: "many"}.Check()
	if err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("got %v", err)
	}
}

// TestSweeps checks both sweeps' sizes: "sweep" as published, 80..2048 by
// 16; "sweep8", every multiple of 8 from 16 to 512, then every 64th to
// 4096.
func TestSweeps(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		n, first, end int
		steps         map[int]int // size: the step that leads to it
	}{
		{spec: "sweep", n: 124, first: 80, end: 2048, steps: map[int]int{96: 16, 2048: 16}},
		{spec: "sweep8", n: 119, first: 16, end: 4096, steps: map[int]int{24: 8, 160: 8, 512: 8, 576: 64, 4096: 64}},
	} {
		sizes, err := ParseSizes(tc.spec)
		if err != nil || len(sizes) != tc.n || sizes[0] != tc.first || sizes[len(sizes)-1] != tc.end {
			t.Errorf("%s: %d sizes %v..., %v; want %d from %d to %d", tc.spec, len(sizes), sizes[:min(len(sizes), 3)], err, tc.n, tc.first, tc.end)
			continue
		}
		for i := 1; i < len(sizes); i++ {
			if step, ok := tc.steps[sizes[i]]; ok && sizes[i]-sizes[i-1] != step {
				t.Errorf("%s: %d follows %d, want a step of %d", tc.spec, sizes[i], sizes[i-1], step)
			}
			if sizes[i]%8 != 0 || sizes[i] <= sizes[i-1] {
				t.Errorf("%s: %d after %d", tc.spec, sizes[i], sizes[i-1])
			}
		}
	}
}
