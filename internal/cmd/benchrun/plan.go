//go:build linux

package main

import (
	"os/exec"

	"github.com/ebpf-zc/ebpf/internal/benchfamily"
)

// options are what the make target passes beside the family's knobs.
type options struct {
	goCmd  string // the go command
	pin    string // make's PIN: the CPU list pinned runs go on; empty for none
	libbpf bool   // libbpf and a C compiler are installed: build with -tags libbpf
}

// taskset is the wrapper of pinned runs, nil where nothing is pinned.
func (o options) taskset() []string {
	if o.pin == "" {
		return nil
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil
	}
	return []string{"taskset", "-c", o.pin}
}

// command is run r's go test command line, as one round runs it.
func command(r benchfamily.Run, o options) ([]string, error) {
	var cmd []string
	if r.Pin {
		cmd = append(cmd, o.taskset()...)
	}
	cmd = append(cmd, o.goCmd, "test", "-vet=off")
	if r.Libbpf && o.libbpf {
		cmd = append(cmd, "-tags", "libbpf")
	}
	cmd = append(cmd, "-run", "^$", "-bench", r.Bench)
	if r.Benchmem {
		cmd = append(cmd, "-benchmem")
	}
	benchtime, err := r.BenchtimeNow()
	if err != nil {
		return nil, err
	}
	if benchtime != "" {
		cmd = append(cmd, "-benchtime", benchtime)
	}
	return append(cmd, "-count", "1", "-timeout", "0", r.Pkg), nil
}
