//go:build linux

package progs

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// rawUserRing writes records into a user ring buffer by hand, with the
// protocol's bare minimum, so the drain program is tested without the
// ringbuf package's Writer (whose tests use the program).
type rawUserRing struct {
	consumer, producer *uint64
	data               []byte // the data area, mapped twice
	size               uint64
}

func newRawUserRing(t *testing.T, size int) (*ebpf.Map, *rawUserRing) {
	t.Helper()
	skipIfNoUserRingbuf(t)
	m, err := NewUserRing(size)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { m.Close() })
	page := os.Getpagesize()
	cons, err := unix.Mmap(m.FD(), 0, page, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := unix.Mmap(m.FD(), int64(page), page+2*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(cons); unix.Munmap(prod) })
	return m, &rawUserRing{
		consumer: (*uint64)(unsafe.Pointer(&cons[0])),
		producer: (*uint64)(unsafe.Pointer(&prod[0])),
		data:     prod[page:],
		size:     uint64(size),
	}
}

func skipIfNoUserRingbuf(t *testing.T) {
	t.Helper()
	bpftest.SkipIfUnavailable(t, HaveUserRingbuf(), "user ring buffers")
}

// put appends a record of len(payload) bytes with the given header flags
// (1<<31 busy, 1<<30 discard) and returns its header's offset.
func (r *rawUserRing) put(t *testing.T, payload []byte, flags uint32) uint64 {
	t.Helper()
	pos := atomic.LoadUint64(r.producer)
	total := (uint64(len(payload)) + 8 + 7) &^ 7
	if pos+total-atomic.LoadUint64(r.consumer) > r.size {
		t.Fatalf("ring full")
	}
	off := pos & (r.size - 1)
	copy(r.data[off+8:], payload)
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&r.data[off])), uint32(len(payload))|flags)
	atomic.StoreUint64(r.producer, pos+total)
	return off
}

func (r *rawUserRing) setHeader(off uint64, word uint32) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&r.data[off])), word)
}

func newTestDrain(t *testing.T, m *ebpf.Map, check DrainCheck) *UserRingDrain {
	t.Helper()
	d, err := NewUserRingDrain(m, check, 0)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func drainOnce(t *testing.T, d *UserRingDrain) int {
	t.Helper()
	n, err := d.Drain()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func totals(t *testing.T, d *UserRingDrain) DrainTotals {
	t.Helper()
	tot, err := d.Totals()
	if err != nil {
		t.Fatal(err)
	}
	return tot
}

// TestUserRingDrainSum: the summing callback sees every submitted record's
// first word, skips discarded ones, and stops at a busy one until it is
// submitted.
func TestUserRingDrainSum(t *testing.T) {
	m, rr := newRawUserRing(t, 4096)
	d := newTestDrain(t, m, DrainSum)
	word := func(v uint64) []byte { return binary.NativeEndian.AppendUint64(make([]byte, 0, 16), v) }
	rr.put(t, word(1), 0)
	rr.put(t, word(100), 1<<30) // discarded
	busy := rr.put(t, append(word(10), 0, 0, 0), 1<<31)
	rr.put(t, word(1000), 0)
	if n := drainOnce(t, d); n != 1 {
		t.Fatalf("first drain took %d records, want 1 (then the discarded one, then the busy one)", n)
	}
	rr.setHeader(busy, 11)
	if n := drainOnce(t, d); n != 2 {
		t.Fatalf("second drain took %d records, want 2", n)
	}
	if got := totals(t, d); got != (DrainTotals{Records: 3, Sum: 1011}) {
		t.Fatalf("totals %+v, want 3 records summing to 1011", got)
	}
	if c, p := atomic.LoadUint64(rr.consumer), atomic.LoadUint64(rr.producer); c != p {
		t.Fatalf("consumer position %d, producer position %d: the ring is not empty", c, p)
	}
}

// TestUserRingDrainSequence: the checking callback accepts records in
// order and counts every kind of bad record it is meant to catch.
func TestUserRingDrainSequence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func() []byte
		errors uint64
	}{
		{"good", func() []byte { r := make([]byte, 40); CheckedRecord(r, 3, 0); return r }, 0},
		{"out of order", func() []byte { r := make([]byte, 40); CheckedRecord(r, 3, 1); return r }, 1},
		{"tail not written", func() []byte {
			r := make([]byte, 40)
			CheckedRecord(r, 3, 0)
			r[39] ^= 1
			return r
		}, 1},
		{"longer than it says", func() []byte {
			r := make([]byte, 48)
			CheckedRecord(r[:40], 3, 0)
			return r
		}, 1},
		{"shorter than it says", func() []byte {
			r := make([]byte, 40)
			CheckedRecord(r, 3, 0)
			return r[:32]
		}, 1},
		{"producer out of range", func() []byte { r := make([]byte, 40); CheckedRecord(r, MaxDrainProducers, 0); return r }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, rr := newRawUserRing(t, 4096)
			d := newTestDrain(t, m, DrainSequence)
			rr.put(t, tc.record(), 0)
			if n := drainOnce(t, d); n != 1 {
				t.Fatalf("drain took %d records, want 1", n)
			}
			if got := totals(t, d); got.Records != 1 || got.Errors != tc.errors {
				t.Fatalf("totals %+v, want 1 record and %d errors", got, tc.errors)
			}
		})
	}
}

// TestUserRingDrainRejectsBadRing: a record that claims more than was
// produced stops the drain with EINVAL and consumes nothing, which is why
// the Writer never publishes a position before the header under it.
func TestUserRingDrainRejectsBadRing(t *testing.T) {
	m, rr := newRawUserRing(t, 4096)
	d := newTestDrain(t, m, DrainSum)
	off := rr.put(t, make([]byte, 8), 0)
	rr.setHeader(off, 64)
	if _, err := d.Drain(); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("drain of a record longer than produced: %v, want EINVAL", err)
	}
	if c := atomic.LoadUint64(rr.consumer); c != 0 {
		t.Fatalf("consumer position %d after a failed drain, want 0", c)
	}
}

// TestFunctionReferenceNeedsStaticFuncInfo pins the trap the drain program
// meets: cilium/ebpf v0.22's asm has no constructor for a function
// reference (loadFunction builds one), and the verifier takes it only
// with BTF func_info that makes the callback static. Without func_info,
// or with a global callback, the program does not load.
func TestFunctionReferenceNeedsStaticFuncInfo(t *testing.T) {
	m, _ := newRawUserRing(t, 4096)
	build := func(callback *btf.Func) asm.Instructions {
		entry := asm.Mov.Reg(asm.R1, asm.R1).WithSymbol("on_sample")
		main := asm.LoadMapPtr(asm.R1, m.FD())
		if callback != nil {
			entry = btf.WithFuncMetadata(entry, callback)
			main = btf.WithFuncMetadata(main, drainFunc)
		}
		return asm.Instructions{
			main,
			loadFunction(asm.R2, "on_sample"),
			asm.Mov.Imm(asm.R3, 0),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnUserRingbufDrain.Call(),
			asm.Return(),
			entry,
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		}
	}
	global := *onSampleFunc
	global.Linkage = btf.GlobalFunc
	for _, tc := range []struct {
		name     string
		callback *btf.Func
		wantErr  string // "" loads, "*" any error, else a part of the error
	}{
		{"static", onSampleFunc, ""},
		{"no func_info", nil, "missing btf func_info"},
		// The message depends on the kernel: 6.12 says "callback function
		// not static", 6.1 fails earlier on the global function's argument
		// ("reference type('UNKNOWN ') size cannot be determined").
		{"global", &global, "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
				Type:         ebpf.SocketFilter,
				License:      "GPL",
				Instructions: build(tc.callback),
			})
			if err == nil {
				prog.Close()
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("load: %v", err)
			case tc.wantErr == "*" && err == nil:
				t.Fatal("load succeeded, want the verifier to refuse a global callback")
			case tc.wantErr != "" && tc.wantErr != "*" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("load: %v, want an error saying %q", err, tc.wantErr)
			}
		})
	}
}
