package ulong

import "golang.org/x/sys/unix"

// Is32 reports whether the kernel's unsigned long is 32 bits wide. A
// 64-bit process runs only on a 64-bit kernel. A 32-bit process (386,
// arm, mips) may run on either; uname names the kernel's machine: x86_64,
// aarch64, ppc64le, s390x, riscv64 and the other 64-bit ones say so, and
// armv8l/armv8b is an arm64 kernel running a 32-bit process. A process
// started under a linux32 personality (setarch) sees a 32-bit name on a
// 64-bit kernel and is taken for 32-bit: positions are then right below
// 4 GiB of traffic, as with cilium/ebpf, which uses the process's word.
var Is32 = Process32 && !machineIs64()

func machineIs64() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	return MachineIs64(unix.ByteSliceToString(u.Machine[:]))
}
