package vmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeKeyringDeb builds a debian-archive-keyring package laid out as
// 2025.1 is (the .gpg a link to the .pgp) holding keyring, and returns
// the .deb's bytes.
func fakeKeyringDeb(t *testing.T, version, keyring string) []byte {
	t.Helper()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skipf("dpkg-deb not installed (Debian package dpkg), which the kernel fetch needs too: %v", err)
	}
	root := filepath.Join(t.TempDir(), "pkg")
	keyrings := filepath.Join(root, "usr", "share", "keyrings")
	for _, d := range []string{filepath.Join(root, "DEBIAN"), keyrings} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	control := "Package: debian-archive-keyring\nVersion: " + version +
		"\nArchitecture: all\nMaintainer: Test <test@example.org>\nDescription: fake keyring for a test\n"
	if err := os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keyrings, "debian-archive-keyring.pgp"), []byte(keyring), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("debian-archive-keyring.pgp", filepath.Join(keyrings, "debian-archive-keyring.gpg")); err != nil {
		t.Fatal(err)
	}
	deb := root + ".deb"
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v: %s", err, out)
	}
	b, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fakeArchive serves files under /debian/ and counts the requests.
type fakeArchive struct {
	files    map[string][]byte
	requests atomic.Int32
}

func (f *fakeArchive) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	b, ok := f.files[strings.TrimPrefix(r.URL.Path, "/debian/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func TestFindKeyring(t *testing.T) {
	newDeb := fakeKeyringDeb(t, "2025.1", "new keys")
	oldDeb := fakeKeyringDeb(t, "2023.3", "old keys")
	pins := []keyringPackage{
		{Version: "2025.1", Pool: "pool/k/new.deb", SHA256: sha256Hex(newDeb)},
		{Version: "2023.3", Pool: "pool/k/old.deb", SHA256: sha256Hex(oldDeb)},
	}
	hostKeyring := writeTemp(t, "debian-archive-keyring.gpg", "host keys")

	for _, tt := range []struct {
		name string
		// host is the machine's keyring: hostKeyring, or a missing file.
		host string
		// served is what the mirror has, by pool path.
		served map[string][]byte
		// want is the keyring's content; "" expects an error holding
		// wantErr, with nothing kept in the cache.
		want, wantErr string
		// wantSource starts the source FindKeyring names.
		wantSource string
	}{
		{name: "the machine's own", host: hostKeyring, want: "host keys", wantSource: "the machine's own"},
		// An Ubuntu runner: no keyring at /usr/share/keyrings.
		{
			name: "fetched", served: map[string][]byte{"pool/k/new.deb": newDeb, "pool/k/old.deb": oldDeb},
			want: "new keys", wantSource: "from debian-archive-keyring 2025.1, fetched",
		},
		{
			name: "first pin dropped from the pool", served: map[string][]byte{"pool/k/old.deb": oldDeb},
			want: "old keys", wantSource: "from debian-archive-keyring 2023.3, fetched",
		},
		{
			name: "not the pinned package", served: map[string][]byte{"pool/k/new.deb": oldDeb, "pool/k/old.deb": oldDeb},
			wantErr: "but " + pins[0].SHA256 + " is pinned",
		},
		{name: "every pin dropped", served: map[string][]byte{}, wantErr: "pin its current version in archiveKeyrings"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			archive := &fakeArchive{files: tt.served}
			srv := httptest.NewServer(archive)
			t.Cleanup(srv.Close)
			host := tt.host
			if host == "" {
				host = filepath.Join(t.TempDir(), "no-such-keyring.gpg")
			}
			kf := keyringFinder{host: host, dir: filepath.Join(t.TempDir(), "apt", "keyring"), mirror: srv.URL, pins: pins, client: srv.Client()}

			got, source, err := kf.find(context.Background())
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("find = %q, %v; want an error with %q", got, err, tt.wantErr)
				}
				if kept, _ := filepath.Glob(filepath.Join(kf.dir, "*.gpg")); len(kept) != 0 {
					t.Errorf("a failed fetch kept %q", kept)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(got); string(b) != tt.want || !strings.HasPrefix(source, tt.wantSource) {
				t.Errorf("find = %s (%q) from %q; want %q from %q…", got, b, source, tt.want, tt.wantSource)
			}
			if tt.host == "" && !strings.HasPrefix(got, kf.dir) {
				t.Errorf("keyring %s is not kept in the cache %s", got, kf.dir)
			}
			// Once kept, the keyring is used without the network.
			before := archive.requests.Load()
			again, source, err := kf.find(context.Background())
			if err != nil || again != got || archive.requests.Load() != before {
				t.Errorf("second find = %s (%s), %v after %d more requests; want %s without any",
					again, source, err, archive.requests.Load()-before, got)
			}
		})
	}
}

// The pinned packages must stay where apt's signed-by accepts them and
// carry a whole SHA-256.
func TestArchiveKeyringPins(t *testing.T) {
	for _, p := range archiveKeyrings {
		if len(p.SHA256) != 64 || strings.Trim(p.SHA256, "0123456789abcdef") != "" {
			t.Errorf("%s: SHA256 %q is not 64 hex digits", p.Version, p.SHA256)
		}
		if want := "debian-archive-keyring_" + p.Version + "_all.deb"; filepath.Base(p.Pool) != want {
			t.Errorf("%s: pool path %s does not end in %s", p.Version, p.Pool, want)
		}
	}
	kf := keyringFinder{dir: "/c/apt/keyring"}
	if got := kf.kept(archiveKeyrings[0]); filepath.Ext(got) != ".gpg" {
		t.Errorf("kept keyring %s does not end in .gpg, which apt's signed-by needs", got)
	}
}
