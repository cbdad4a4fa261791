//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// mount is one file system the init mounts before any test runs.
type mount struct {
	source, target, fstype string
	// required mounts stop the run when they fail; the others are only
	// noted, since older kernels or other configs may lack them.
	required bool
}

// mounts come in order: /sys before the file systems mounted under it.
// /proc must be there before a test binary starts, since cilium/ebpf reads
// it while its packages initialise.
var mounts = []mount{
	{"proc", "/proc", "proc", true},
	{"sysfs", "/sys", "sysfs", true},
	{"bpf", "/sys/fs/bpf", "bpf", true},
	{"tracefs", "/sys/kernel/tracing", "tracefs", false},
	{"debugfs", "/sys/kernel/debug", "debugfs", false},
	{"cgroup2", "/sys/fs/cgroup", "cgroup2", false},
}

// mountAll mounts the table above. /dev is mounted earlier, by
// setupConsole, because the console lives there.
func mountAll(say func(kind string, kv ...string)) error {
	for _, m := range mounts {
		err := mountOne(m.source, m.target, m.fstype)
		if err == nil {
			continue
		}
		if m.required {
			return err
		}
		say(wire.KindNote, wire.FieldMsg, err.Error())
	}
	for _, dir := range []string{"/tmp", "/root"} {
		if err := os.MkdirAll(dir, 0o1777); err != nil {
			return err
		}
	}
	return nil
}

func mountOne(source, target, fstype string) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("mount %s on %s: %w", fstype, target, err)
	}
	err := syscall.Mount(source, target, fstype, 0, "")
	if errors.Is(err, syscall.EBUSY) {
		// Already mounted (a kernel that mounts it by itself).
		return nil
	}
	if err != nil {
		return fmt.Errorf("mount %s on %s: %w", fstype, target, err)
	}
	return nil
}
