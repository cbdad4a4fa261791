// Package benchknob reads a benchmark's settings from the environment,
// where make passes them (a variable given on make's command line is in
// the environment of every command it runs): one parser for every
// setting, which falls back on the default only where the variable is
// unset or empty and fails with the variable's name on a malformed value.
//
// The settings themselves, with their defaults, are declared once, in
// each benchmark family's description (internal/benchfamily).
package benchknob

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// A Kind is what a setting's value is, and so how it is parsed.
type Kind int

const (
	// Int is one integer: 4096.
	Int Kind = iota
	// Ints is a comma-separated list of integers: 0,1,2,4.
	Ints
	// Duration is a time.ParseDuration value: 2s, 200ms.
	Duration
	// Text is any string, taken as it is.
	Text
	// Sizes is a comma-separated list of event sizes, each a multiple of
	// 8 and at least 8, or "sweep" or "sweep8" (see [ParseSizes]).
	Sizes
)

// A Knob is one setting of a benchmark, read from the environment
// variable Env.
type Knob struct {
	Env  string
	Kind Kind
	// Default is the value where Env is unset or empty, as it would be
	// written in the environment.
	Default string
	// Compute, where set, works the default out on this machine (1, 2 and
	// every CPU); Default then says it in words, for people.
	Compute func() string
	// Target, where set, is the value the make target runs the benchmark
	// with where Env is unset, and TargetFull the value with FULL=1; a
	// plain go test gets Default.
	Target, TargetFull string
	// Alias is a shorter name make takes for the same setting (SIZES).
	Alias string
	// Doc says what the setting does, in a line or two.
	Doc string
}

// Raw is the knob's value as written: the environment's, or the default.
func (k Knob) Raw() string {
	if v := os.Getenv(k.Env); v != "" {
		return v
	}
	if k.Compute != nil {
		return k.Compute()
	}
	return k.Default
}

// IsSet reports whether the environment gives the knob a value.
func (k Knob) IsSet() bool { return os.Getenv(k.Env) != "" }

// errorf says which variable holds the bad value, or that the default
// is bad (a mistake in the description, which a test catches).
func (k Knob) errorf(v, want string) error {
	if k.IsSet() {
		return fmt.Errorf("%s=%q: want %s", k.Env, v, want)
	}
	return fmt.Errorf("%s: its default %q is not %s", k.Env, v, want)
}

func (k Knob) want(kind Kind) error {
	if k.Kind != kind {
		return fmt.Errorf("%s is a %s setting, read as a %s", k.Env, k.Kind, kind)
	}
	return nil
}

// Int returns the value of an [Int] knob.
func (k Knob) Int() (int, error) {
	if err := k.want(Int); err != nil {
		return 0, err
	}
	v := k.Raw()
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, k.errorf(v, "an integer")
	}
	return n, nil
}

// Ints returns the values of an [Ints] knob.
func (k Knob) Ints() ([]int, error) {
	if err := k.want(Ints); err != nil {
		return nil, err
	}
	v := k.Raw()
	var ns []int
	for field := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			return nil, k.errorf(v, "comma-separated integers")
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// Duration returns the value of a [Duration] knob.
func (k Knob) Duration() (time.Duration, error) {
	if err := k.want(Duration); err != nil {
		return 0, err
	}
	v := k.Raw()
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return 0, k.errorf(v, "a duration such as 2s or 200ms")
	}
	return d, nil
}

// Text returns the value of a [Text] knob.
func (k Knob) Text() (string, error) {
	if err := k.want(Text); err != nil {
		return "", err
	}
	return k.Raw(), nil
}

// Sizes returns the values of a [Sizes] knob.
func (k Knob) Sizes() ([]int, error) {
	if err := k.want(Sizes); err != nil {
		return nil, err
	}
	v := k.Raw()
	sizes, err := ParseSizes(v)
	if err != nil {
		return nil, k.errorf(v, "multiples of 8 (at least 8), comma-separated, or sweep or sweep8")
	}
	return sizes, nil
}

// Count is how many values the knob holds: the length of a list, 1
// otherwise; and an error if its value is malformed.
func (k Knob) Count() (int, error) {
	switch k.Kind {
	case Ints:
		ns, err := k.Ints()
		return len(ns), err
	case Sizes:
		ns, err := k.Sizes()
		return len(ns), err
	}
	return 1, k.Check()
}

// Check parses the knob's value as its kind says and returns what is
// wrong with it, if anything.
func (k Knob) Check() error {
	var err error
	switch k.Kind {
	case Int:
		_, err = k.Int()
	case Ints:
		_, err = k.Ints()
	case Duration:
		_, err = k.Duration()
	case Sizes:
		_, err = k.Sizes()
	case Text:
	default:
		err = fmt.Errorf("%s: unknown kind %d", k.Env, k.Kind)
	}
	return err
}

// String names the kind.
func (kind Kind) String() string {
	switch kind {
	case Int:
		return "integer"
	case Ints:
		return "list of integers"
	case Duration:
		return "duration"
	case Text:
		return "text"
	case Sizes:
		return "list of sizes"
	}
	return fmt.Sprintf("Kind(%d)", int(kind))
}

// DefaultSizes are the event sizes the drain benchmarks (the ring
// buffer's and perf's) take unless told otherwise, as [ParseSizes]
// reads them.
const DefaultSizes = "16,64,128,256,512,1024,2048,4096"

// ParseSizes reads a comma-separated list of event sizes, each a multiple
// of 8 and at least 8 (the drain benchmarks' producers write whole words
// and their touch reads the first one), or one of two sweeps: "sweep",
// the published one, 80..2048 by 16; "sweep8", make bench-sweep's, every
// size a record can have from 16 to 512 (by 8) and every 64th from 576
// to 4096, where a cliff in a reader's walk moves by a step of 8 and
// larger records only change slowly.
func ParseSizes(spec string) ([]int, error) {
	switch spec {
	case "sweep":
		return sizeRange(nil, 80, 2048, 16), nil
	case "sweep8":
		return sizeRange(sizeRange(nil, 16, 512, 8), 576, 4096, 64), nil
	}
	var sizes []int
	for field := range strings.SplitSeq(spec, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || size < 8 || size%8 != 0 {
			return nil, fmt.Errorf("event size %q: want a multiple of 8, at least 8", field)
		}
		sizes = append(sizes, size)
	}
	return sizes, nil
}

// sizeRange appends from, from+step, ... up to to to sizes.
func sizeRange(sizes []int, from, to, step int) []int {
	for size := from; size <= to; size += step {
		sizes = append(sizes, size)
	}
	return sizes
}

// Exit reports err on stderr and exits 2: for a setting read where there
// is no test to fail, such as a flag's default in a test binary.
func Exit(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}
