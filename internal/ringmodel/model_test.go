package ringmodel

import (
	"errors"
	"math"
	"testing"
)

// TestProjection checks the model's arithmetic on numbers worked by hand.
func TestProjection(t *testing.T) {
	cases := []struct {
		name           string
		alone, two     float64
		n              int
		wantPerEvent   float64 // ns
		wantPerSecond  float64 // events/s, all producers
		wantCeilingInf bool
		wantCeiling    float64
	}{
		// s = 10: t(8) = 40 + 7·10 = 110 ns; 8/110 ns = 72.73 M/s; 1/s = 100 M/s.
		{"contended/8", 40, 50, 8, 110, 8 / 110e-9, false, 1e8},
		// t(128) = 40 + 127·10 = 1310 ns; 128/1310 ns = 97.71 M/s, near the ceiling.
		{"contended/128", 40, 50, 128, 1310, 128 / 1310e-9, false, 1e8},
		{"alone", 40, 50, 1, 40, 25e6, false, 1e8},
		// Two producers cheaper than one is noise: nothing serial, linear.
		{"noise/32", 40, 39, 32, 40, 32 * 25e6, true, 0},
		{"uncontended/32", 30, 30, 32, 30, 32 / 30e-9, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Fit(c.alone, c.two)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.PerEvent(c.n)
			if err != nil || !near(got, c.wantPerEvent) {
				t.Errorf("PerEvent(%d) = %g, %v; want %g", c.n, got, err, c.wantPerEvent)
			}
			rate, err := m.EventsPerSecond(c.n)
			if err != nil || !near(rate, c.wantPerSecond) {
				t.Errorf("EventsPerSecond(%d) = %g, %v; want %g", c.n, rate, err, c.wantPerSecond)
			}
			ceiling := m.Ceiling()
			if c.wantCeilingInf != math.IsInf(ceiling, 1) || (!c.wantCeilingInf && !near(ceiling, c.wantCeiling)) {
				t.Errorf("Ceiling() = %g, want %g (infinite: %v)", ceiling, c.wantCeiling, c.wantCeilingInf)
			}
			if !c.wantCeilingInf && rate >= ceiling {
				t.Errorf("%g events/s with %d producers, at or above the ceiling %g", rate, c.n, ceiling)
			}
		})
	}
}

// TestBadInput checks that the model refuses what it cannot fit or
// project, with an error, not a panic or a NaN.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name       string
		alone, two float64
	}{
		{"zero", 0, 10},
		{"negative", 10, -1},
		{"NaN", math.NaN(), 10},
		{"infinite", 10, math.Inf(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Fit(c.alone, c.two); err == nil {
				t.Fatalf("Fit(%g, %g) gave no error", c.alone, c.two)
			}
		})
	}
	m, err := Fit(10, 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.PerEvent(0); !errors.Is(err, ErrProducers) {
		t.Errorf("PerEvent(0): %v, want ErrProducers", err)
	}
	if _, err := m.EventsPerSecond(-3); !errors.Is(err, ErrProducers) {
		t.Errorf("EventsPerSecond(-3): %v, want ErrProducers", err)
	}
}

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}
