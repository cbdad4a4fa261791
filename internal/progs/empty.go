//go:build linux

package progs

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// NewEmptyProgram loads a program of type typ that only returns 0: what
// a test-run loop costs before the program does anything, the baseline
// a producer's own cost is measured against.
func NewEmptyProgram(typ ebpf.ProgramType) (*ebpf.Program, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    typ,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("progs: load empty %v program: %w", typ, err)
	}
	return prog, nil
}
