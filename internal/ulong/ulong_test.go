package ulong

import (
	"math"
	"testing"
)

func TestWiden(t *testing.T) {
	for _, tc := range []struct {
		name string
		near uint64
		word uint32
		want uint64
	}{
		{"start", 0, 0, 0},
		{"ahead", 16, 4096, 4096},
		{"behind", 4096, 16, 16},
		{"ahead across 2^32", 1<<32 - 8, 24, 1<<32 + 24},
		{"behind across 2^32", 1<<32 + 24, math.MaxUint32 - 7, 1<<32 - 8},
		{"far along", 5<<32 + 100, 200, 5<<32 + 200},
		{"ahead across a later 2^32", 7<<32 - 16, 8, 7<<32 + 8},
		{"almost 2 GiB ahead", 1 << 40, 1<<31 - 8, 1<<40 + 1<<31 - 8},
		{"2 GiB behind", 1<<40 + 1<<31, 0, 1 << 40},
		// A backward (overwritable) perf buffer moves its head down from
		// 0, as a 64-bit kernel's does.
		{"below zero", 0, math.MaxUint32 - 63, math.MaxUint64 - 63},
		{"further below zero", math.MaxUint64 - 63, math.MaxUint32 - 4095, math.MaxUint64 - 4095},
	} {
		if got := Widen(tc.near, tc.word); got != tc.want {
			t.Errorf("%s: Widen(%#x, %#x) = %#x, want %#x", tc.name, tc.near, tc.word, got, tc.want)
		}
		if got := uint32(Widen(tc.near, tc.word)); got != tc.word {
			t.Errorf("%s: the low half %#x is not the word %#x", tc.name, got, tc.word)
		}
	}
}

func TestMachineIs64(t *testing.T) {
	for machine, want := range map[string]bool{
		"x86_64": true, "aarch64": true, "ppc64le": true, "s390x": true, "riscv64": true,
		"mips64": true, "loongarch64": true, "armv8l": true,
		"i686": false, "i386": false, "armv7l": false, "mips": false, "ppc": false,
	} {
		if got := MachineIs64(machine); got != want {
			t.Errorf("MachineIs64(%q) = %v, want %v", machine, got, want)
		}
	}
}
