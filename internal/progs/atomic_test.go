//go:build linux

package progs

import (
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/ebpf-zc/ebpf/internal/bpftest"
)

// atomicResult runs one atomic instruction on a map value holding before,
// with 5 in the source register, and returns the value afterwards and what
// the source register held afterwards.
func atomicResult(t *testing.T, ins asm.Instruction, before uint64) (value, fetched uint64) {
	t.Helper()
	m := newTestCounters(t)
	if err := m.Put(uint32(0), [2]uint64{before, 0}); err != nil {
		t.Fatal(err)
	}
	ins.Dst, ins.Src, ins.Offset = asm.R1, asm.R2, 0
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.SocketFilter,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMapValue(asm.R1, m.FD(), 0),
			asm.Mov.Imm(asm.R2, 5),
			asm.Mov.Imm(asm.R0, int32(before)), // CmpXchg compares with R0
			ins,
			asm.StoreMem(asm.R1, 8, asm.R2, asm.DWord), // what the fetch left in R2
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { prog.Close() })
	if err := RunTimes(prog, 1); err != nil {
		t.Fatal(err)
	}
	value, fetched, err = ReadCounters(m)
	if err != nil {
		t.Fatal(err)
	}
	return value, fetched
}

// TestAtomicImmediateTrap shows cilium/ebpf v0.22.0's asm losing the
// atomic operation (every op runs as a plain add) and Atomic restoring it.
func TestAtomicImmediateTrap(t *testing.T) {
	const before = 12 // 0b1100; the source register holds 5 (0b0101)
	for _, tc := range []struct {
		op                 asm.AtomicOp
		wantValue, wantSrc uint64
	}{
		{asm.FetchAdd, before + 5, before},
		{asm.AndAtomic, before & 5, 5},
		{asm.FetchOr, before | 5, before},
		{asm.FetchXor, before ^ 5, before},
		{asm.Xchg, 5, before},
		{asm.CmpXchg, 5, 5}, // R0 == before, so it swaps; R0 gets the old value
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			raw := tc.op.Mem(asm.R1, asm.R2, asm.DWord, 0)
			if value, src := atomicResult(t, raw, before); value != before+5 || src != 5 {
				t.Errorf("without the workaround: value %d, src %d; want the plain add the trap predicts (%d, 5): has asm been fixed?",
					value, src, before+5)
			}
			if err := HaveAtomicFetch(); err != nil {
				t.Skipf("the trap shows; the workaround needs the operation itself: %v", err)
			}
			value, src := atomicResult(t, Atomic(tc.op, asm.R1, asm.R2, asm.DWord, 0), before)
			if value != tc.wantValue || src != tc.wantSrc {
				t.Errorf("with Atomic: value %d, src %d; want %d, %d", value, src, tc.wantValue, tc.wantSrc)
			}
		})
	}
}

// TestNextSequenceNumbers checks that NextSequence hands out 0, 1, 2, ...
// whichever form the kernel takes (atomic fetch, or load, add and store).
func TestNextSequenceNumbers(t *testing.T) {
	m := newTestCounters(t)
	insns := append(NextSequence(m, asm.R6),
		asm.StoreMem(asm.R1, dropOffset, asm.R6, asm.DWord), // the number handed out
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, License: "GPL", Instructions: insns})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { prog.Close() })
	for want := uint64(0); want < 3; want++ {
		if _, err := prog.Run(&ebpf.RunOptions{Data: testInput}); err != nil {
			t.Fatal(err)
		}
		next, got, err := ReadCounters(m)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || next != want+1 {
			t.Fatalf("run %d: handed out %d, counter at %d; want %d, %d", want, got, next, want, want+1)
		}
	}
}

// TestHaveAtomicFetchMatchesKernel loads an atomic fetch-add the way
// Atomic builds it: if the kernel takes it, HaveAtomicFetch must say so.
// Its probe once failed on every kernel (TestStoreImmDWordTrap), so every
// test that needs atomic fetch skipped everywhere.
func TestHaveAtomicFetchMatchesKernel(t *testing.T) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.SocketFilter,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R1, 0),
			asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.R10),
			asm.Mov.Imm(asm.R2, 1),
			Atomic(asm.FetchAdd, asm.R1, asm.R2, asm.DWord, -8),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	probeErr := HaveAtomicFetch()
	if err != nil {
		if bpftest.Unavailable(err) {
			t.Skipf("BPF unavailable: %v", err)
		}
		if probeErr == nil {
			t.Fatalf("kernel rejects atomic fetch (%v) but HaveAtomicFetch reports it", err)
		}
		t.Skipf("kernel lacks atomic fetch: %v", err)
	}
	prog.Close()
	if probeErr != nil {
		t.Fatalf("kernel loads an atomic fetch-add, but HaveAtomicFetch says: %v", probeErr)
	}
}

// TestStoreImmDWordTrap shows cilium/ebpf v0.22.0's asm encoding
// StoreImm(…, DWord) as an opcode the verifier rejects, which is why this
// package stores a double word as two words or from a register.
func TestStoreImmDWordTrap(t *testing.T) {
	load := func(store ...asm.Instruction) error {
		insns := append(asm.Instructions{}, store...)
		insns = append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, License: "GPL", Instructions: insns})
		if err == nil {
			prog.Close()
		}
		return err
	}
	err := load(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord))
	skipIfNoBPF(t, err)
	if err := load(asm.StoreImm(asm.R10, -8, 0, asm.Word), asm.StoreImm(asm.R10, -4, 0, asm.Word)); err != nil {
		t.Fatalf("two word stores: %v", err)
	}
	if err := load(asm.StoreImm(asm.R10, -8, 0, asm.DWord)); err == nil {
		t.Error("StoreImm(…, DWord) loaded: has asm been fixed? The two-word workaround may go")
	}
}

// TestRunTimesExactUnderSignals: with signals hitting the running thread
// (each one fails a test run with EINTR, which cilium/ebpf runs again from
// the start), RunExactly still runs a program as often as asked, not more.
func TestRunTimesExactUnderSignals(t *testing.T) {
	m := newTestCounters(t)
	insns := append(NextSequence(m, asm.R6), asm.Mov.Imm(asm.R0, 0), asm.Return())
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, License: "GPL", Instructions: insns})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { prog.Close() })

	const rounds, runs = 5, 1000
	tid := make(chan int)
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		var err error
		for range rounds {
			if err = RunExactly(prog, runs); err != nil {
				break
			}
		}
		close(stop)
		done <- err
	}()
	target := <-tid
	// SIGURG is the runtime's own preemption signal: a stray one is ignored.
	for sent := 0; ; sent++ {
		select {
		case <-stop:
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got, _, err := ReadCounters(m)
			if err != nil {
				t.Fatal(err)
			}
			if got != rounds*runs {
				t.Fatalf("%d runs with %d signals sent, want %d", got, sent, rounds*runs)
			}
			return
		default:
		}
		if err := unix.Tgkill(unix.Getpid(), target, unix.SIGURG); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Microsecond)
	}
}
