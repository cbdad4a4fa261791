package vmtest

import "testing"

func TestFindVmlinuz(t *testing.T) {
	for _, tt := range []struct {
		name, listing, member, release string
		ok                             bool
	}{
		{
			name: "boot folder (up to 6.x)",
			listing: `drwxr-xr-x root/root         0 2026-07-31 09:44 ./boot/
-rw-r--r-- root/root    106283 2026-07-31 09:44 ./boot/config-5.10.0-46-cloud-amd64
-rw-r--r-- root/root  12196192 2026-07-31 09:44 ./boot/vmlinuz-5.10.0-46-cloud-amd64
-rw-r--r-- root/root     17481 2026-07-31 09:44 ./lib/modules/5.10.0-46-cloud-amd64/kernel/arch/x86/crypto/aegis128-aesni.ko`,
			member: "./boot/vmlinuz-5.10.0-46-cloud-amd64", release: "5.10.0-46-cloud-amd64", ok: true,
		},
		{
			name: "modules folder (7.x linux-binary)",
			listing: `drwxr-xr-x root/root         0 2026-09-01 00:00 ./usr/lib/modules/7.3.4+deb13-cloud-amd64/
-rw-r--r-- root/root  13965248 2026-09-01 00:00 ./usr/lib/modules/7.3.4+deb13-cloud-amd64/vmlinuz
-rw-r--r-- root/root       100 2026-09-01 00:00 ./usr/share/doc/linux-binary-7.3.4+deb13-cloud-amd64/copyright`,
			member: "./usr/lib/modules/7.3.4+deb13-cloud-amd64/vmlinuz", release: "7.3.4+deb13-cloud-amd64", ok: true,
		},
		{
			name:    "symbolic link is not the image",
			listing: `lrwxrwxrwx root/root         0 2026-09-01 00:00 ./boot/vmlinuz-7.3.4+deb13-cloud-amd64 -> ../usr/lib/modules/7.3.4+deb13-cloud-amd64/vmlinuz`,
		},
		{
			name:    "meta package without image",
			listing: `-rw-r--r-- root/root      1000 2026-09-01 00:00 ./usr/share/doc/linux-image-7.3.4+deb13-cloud-amd64/changelog.gz`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			member, release, ok := FindVmlinuz(tt.listing)
			if member != tt.member || release != tt.release || ok != tt.ok {
				t.Errorf("FindVmlinuz = %q, %q, %v; want %q, %q, %v", member, release, ok, tt.member, tt.release, tt.ok)
			}
		})
	}
}
