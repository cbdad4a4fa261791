//go:build linux

package main

import (
	"os"
	"syscall"
	"time"

	"github.com/ebpf-zc/ebpf/internal/vmtest/wire"
)

// startHeartbeat writes a byte to wire.HeartbeatDevice every
// wire.HeartbeatInterval until the VM powers off, so the host can tell a
// live guest running a quiet test from a hung one.
func startHeartbeat() error {
	// O_NONBLOCK: a serial port's open may otherwise wait for a carrier;
	// a beat that finds the port busy is simply skipped.
	f, err := os.OpenFile(wire.HeartbeatDevice, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	go func() {
		beat := []byte{'.'}
		for {
			f.Write(beat)
			time.Sleep(wire.HeartbeatInterval)
		}
	}()
	return nil
}
