//go:build linux

package drainbench_test

import (
	"flag"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
	"github.com/ebpf-zc/ebpf/internal/drainbench"
	"github.com/ebpf-zc/ebpf/internal/drainbench/ours"
	"github.com/ebpf-zc/ebpf/internal/drainloop"
	"github.com/ebpf-zc/ebpf/internal/progs"
)

func TestParseSizes(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    []int
		wantErr bool
	}{
		{spec: "16", want: []int{16}},
		{spec: "16, 4096", want: []int{16, 4096}},
		{spec: drainbench.DefaultSizes, want: []int{16, 64, 128, 256, 512, 1024, 2048, 4096}},
		{spec: "12", wantErr: true},
		{spec: "0", wantErr: true},
		{spec: "16,,32", wantErr: true},
		{spec: "big", wantErr: true},
	} {
		got, err := drainbench.ParseSizes(tc.spec)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseSizes(%q): error %v, want error %v", tc.spec, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && !slices.Equal(got, tc.want) {
			t.Errorf("ParseSizes(%q) = %v, want %v", tc.spec, got, tc.want)
		}
	}
	sweep, err := drainbench.ParseSizes("sweep")
	if err != nil || len(sweep) != 124 || sweep[0] != 80 || sweep[len(sweep)-1] != 2048 {
		t.Errorf("ParseSizes(sweep) = %d sizes from %v, error %v; want 124 from 80 to 2048", len(sweep), sweep[:min(len(sweep), 1)], err)
	}
}

// skipOneDrainer drains like upstream's ReadInto but drops the touch of
// every record after the first: the sum check must catch it.
type skipOneDrainer struct{ drainbench.Drainer }

func (d skipOneDrainer) Drain(n int, all bool) (uint64, error) {
	sum, err := d.Drainer.Drain(n, all)
	return sum - 1, err
}

func TestDrainChecksEveryMode(t *testing.T) {
	ring, err := progs.NewRing(4096)
	bpftest.SkipIfUnavailable(t, err, "BPF ring buffers")
	ring.Close()
	// 2000 records a run: a 64 KiB ring of 64-byte records holds 910, so
	// every run refills the ring twice.
	setFlag(t, "test.benchtime", "2000x")

	cheat := func(m *ebpf.Map) (drainbench.Drainer, error) {
		d, err := drainbench.OpenUpstream(m)
		return skipOneDrainer{d}, err
	}
	modes := append([]drainbench.Mode{{Name: "upstream", Open: drainbench.OpenUpstream}}, ours.Modes...)
	modes = append(modes, drainbench.Mode{Name: "cheat", Open: cheat})
	for _, mode := range modes {
		for _, all := range []bool{false, true} {
			t.Run(mode.Name+"/"+drainloop.TouchName(all), func(t *testing.T) {
				res := testing.Benchmark(func(b *testing.B) {
					fix := drainbench.NewFixture(b, 64<<10, 64)
					d, err := mode.Open(fix.Ring)
					if err != nil {
						b.Fatal(err)
					}
					defer d.Close()
					fix.Drain(b, d, all)
				})
				// A failed benchmark reports N=0.
				want := mode.Name != "cheat"
				if passed := res.N == 2000; passed != want {
					t.Fatalf("mode %s: benchmark passed %v (N=%d), want %v", mode.Name, passed, res.N, want)
				}
				if want && res.Extra["Mrec/s"] <= 0 {
					t.Errorf("mode %s: Mrec/s = %v, want a rate", mode.Name, res.Extra["Mrec/s"])
				}
			})
		}
	}
}

// setFlag sets a testing flag for the rest of t and restores it after.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}
