// Package vmtest runs the project's tests inside QEMU virtual machines on
// several real Debian kernels, for `make test-vms`.
//
// The host side fetches kernels through a private apt configuration
// (fetch.go, apt.go), builds every test package as a static binary and
// packs it with a small Go init into an initramfs (build.go,
// initramfs.go), boots one VM per kernel (qemu.go), and reads back what
// happened from the serial console and QEMU's exit status (console.go,
// outcome.go). The guest side is internal/cmd/vminit; the two agree on the format
// defined in package wire.
package vmtest
