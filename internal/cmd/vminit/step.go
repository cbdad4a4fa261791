//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// baseEnv is the environment of every step before the plan's own.
var baseEnv = []string{
	"PATH=/usr/bin:/bin",
	"HOME=/root",
	"TMPDIR=/tmp",
}

// runStep runs one test binary with its output going straight to the
// console, and returns its exit code and, when it did not simply exit, a
// one-word reason: "timeout", "signal", or "start".
func runStep(con *os.File, env []string, st wire.Step) (int, string) {
	ctx := context.Background()
	if st.TimeoutSeconds > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(st.TimeoutSeconds)*time.Second)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, st.Binary, st.Args...)
	cmd.Dir = st.Dir
	cmd.Env = append(append([]string{}, baseEnv...), env...)
	cmd.Stdin = nil
	cmd.Stdout = con
	cmd.Stderr = con
	// Own process group, so a timeout also ends whatever the test started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return -1, "timeout"
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, "signal:" + ws.Signal().String()
		}
		return ee.ExitCode(), ""
	default:
		return -1, "start"
	}
}
