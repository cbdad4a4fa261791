// Package wire defines what the host runner and the guest init say to each
// other: the plan the host packs into the initramfs, the marker lines the
// guest prints on the serial console, and the codes it writes to QEMU's
// isa-debug-exit port.
//
// Both sides import this package so the format is written down once.
package wire
