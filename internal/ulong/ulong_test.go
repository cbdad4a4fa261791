package ulong

import (
	"errors"
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
		if got := machineIs64(machine); got != want {
			t.Errorf("machineIs64(%q) = %v, want %v", machine, got, want)
		}
	}
}

func TestKallsymsWord(t *testing.T) {
	for _, tc := range []struct {
		start string
		want  int
	}{
		{"ffffffff81000000 T _stext\n", 8},
		{"0000000000000000 T _stext\n", 8}, // kptr_restrict hides it, not its width
		{"ffffffffc0a1b000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n", 8},
		{"c1000000 T _stext\n", 4},
		{"00000000 T _stext\n", 4},
		{"80008000 T stext\n", 4},
		{"", 0},                           // unreadable, or masked with /dev/null
		{"ffffffff81000000", 0},           // cut short: more digits may follow
		{"ffffffff8100000 T _stext\n", 0}, // neither width
		{"ffffffff810000000 T x\n", 0},
		{"FFFFFFFF81000000 T _stext\n", 0}, // not what vsprintf prints
		{"0x81000000 T _stext\n", 0},
		{" T _stext\n", 0},
	} {
		if got := kallsymsWord([]byte(tc.start)); got != tc.want {
			t.Errorf("kallsymsWord(%q) = %d, want %d", tc.start, got, tc.want)
		}
	}
}

func TestUnameTells(t *testing.T) {
	for _, tc := range []struct {
		name    string
		persona uint32
		want    bool
	}{
		{"PER_LINUX", 0x0000, true},
		{"PER_LINUX32", 0x0008, false},
		{"PER_LINUX32_3GB", 0x0008 | 0x8000000, false},
		{"PER_LINUX32 with ADDR_NO_RANDOMIZE", 0x0008 | 0x0040000, false},
		{"PER_LINUX with ADDR_NO_RANDOMIZE", 0x0040000, true},
		{"PER_LINUX with UNAME26", 0x0020000, true},
		{"PER_LINUX_32BIT", 0x0800000, true}, // an address limit, not a machine
		{"PER_BSD", 0x0006, true},
	} {
		if got := unameTells(tc.persona); got != tc.want {
			t.Errorf("%s: unameTells(%#x) = %v, want %v", tc.name, tc.persona, got, tc.want)
		}
	}
}

func TestKernelIs32(t *testing.T) {
	const (
		perLinux    = 0x0000
		linux32     = 0x0008
		kallsyms64  = "ffffffff81000000 T _stext\n"
		kallsyms32  = "c1000000 T _stext\n"
		unreadable  = ""
		unknownName = ""
	)
	for _, tc := range []struct {
		name     string
		kallsyms string
		persona  uint32
		machine  string
		want     bool
		unknown  bool
	}{
		{"64-bit kernel", kallsyms64, perLinux, "x86_64", false, false},
		{"32-bit kernel", kallsyms32, perLinux, "i686", true, false},
		{"linux32 on a 64-bit kernel", kallsyms64, linux32, "i686", false, false},
		{"linux32 on a 32-bit kernel", kallsyms32, linux32, "i686", true, false},
		{"arm64 kernel, no kallsyms", unreadable, perLinux, "aarch64", false, false},
		{"linux32 on arm64, no kallsyms", unreadable, linux32, "armv8l", false, false},
		{"32-bit kernel, no kallsyms", unreadable, perLinux, "armv7l", true, false},
		{"linux32, no kallsyms", unreadable, linux32, "i686", false, true},
		{"no kallsyms, no uname", unreadable, perLinux, unknownName, false, true},
		{"kallsyms before uname", kallsyms64, perLinux, "i686", false, false},
	} {
		got, err := kernelIs32([]byte(tc.kallsyms), tc.persona, tc.machine)
		if tc.unknown {
			if !errors.Is(err, ErrWordSize) {
				t.Errorf("%s: got %v, %v; want ErrWordSize", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
