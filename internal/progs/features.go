//go:build linux

package progs

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// ErrNoAtomicFetch says the kernel has no atomic operations that return
// the old value (BPF_FETCH, BPF_XCHG, BPF_CMPXCHG) and no atomic AND, OR
// or XOR: those came in Linux 5.12 (commit 5ca419f2864a, "bpf: Add
// BPF_FETCH field / create atomic_fetch_add instruction"); before that the
// verifier rejects them with "BPF_STX uses reserved fields". Only the
// plain atomic add is older.
var ErrNoAtomicFetch = errors.New("kernel lacks BPF atomic fetch operations (Linux 5.12+)")

// HaveAtomicFetch reports, with an error wrapping ErrNoAtomicFetch and
// naming the running kernel, whether programs may use atomic operations
// other than a plain add. It loads a probe program once per process.
func HaveAtomicFetch() error { return haveAtomicFetch() }

var haveAtomicFetch = sync.OnceValue(func() error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.SocketFilter,
		License: "GPL",
		Instructions: asm.Instructions{
			// Two word stores: v0.22's asm encodes StoreImm(…, DWord) as
			// an invalid opcode (TestStoreImmDWordTrap), which made this
			// probe fail on every kernel.
			asm.StoreImm(asm.R10, -8, 0, asm.Word),
			asm.StoreImm(asm.R10, -4, 0, asm.Word),
			asm.Mov.Reg(asm.R1, asm.R10),
			asm.Mov.Imm(asm.R2, 1),
			Atomic(asm.FetchAdd, asm.R1, asm.R2, asm.DWord, -8),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err == nil {
		prog.Close()
		return nil
	}
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%w: kernel %s", ErrNoAtomicFetch, kernelRelease())
	}
	// No BPF at all: say so, so callers skip for the right reason.
	return fmt.Errorf("progs: probe atomic fetch: %w", err)
})

// kernelRelease returns uname -r.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "(unknown)"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// HaveXDPLoadBytes reports whether XDP programs may call
// bpf_xdp_load_bytes (Linux 5.18+), which the XDP capture program uses to
// copy a packet's first bytes. The error wraps ebpf.ErrNotSupported and
// names the helper and the running kernel.
func HaveXDPLoadBytes() error { return haveXDPLoadBytes() }

var haveXDPLoadBytes = sync.OnceValue(func() error {
	err := features.HaveProgramHelper(ebpf.XDP, asm.FnXdpLoadBytes)
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("XDP capture needs bpf_xdp_load_bytes (Linux 5.18+), kernel %s: %w", kernelRelease(), err)
	}
	return err
})

// HaveUserRingbuf reports whether the kernel has user ring buffers
// (BPF_MAP_TYPE_USER_RINGBUF and bpf_user_ringbuf_drain, Linux 6.1+). The
// error wraps ebpf.ErrNotSupported and names the running kernel.
func HaveUserRingbuf() error { return haveUserRingbuf() }

var haveUserRingbuf = sync.OnceValue(func() error {
	err := features.HaveMapType(ebpf.UserRingbuf)
	if err == nil {
		err = features.HaveProgramHelper(ebpf.SocketFilter, asm.FnUserRingbufDrain)
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("user ring buffers need Linux 6.1+, kernel %s: %w", kernelRelease(), err)
	}
	return err
})
