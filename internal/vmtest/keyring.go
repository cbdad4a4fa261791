package vmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// keyringPackage is one debian-archive-keyring package, pinned by the
// hash of its .deb.
type keyringPackage struct {
	// Version is the package's Debian version; it names the kept keyring,
	// so that a new pin fetches anew.
	Version string
	// Pool is the .deb's path under the mirror's /debian folder.
	Pool string
	// SHA256 is the .deb's hash, as the signed Packages index states it.
	SHA256 string
}

// archiveKeyrings are the packages a machine without DebianKeyring (an
// Ubuntu CI runner) takes its keyring from, tried in order: the first
// the mirror still has is used. Both hold the same
// debian-archive-keyring.gpg (bullseye to trixie keys).
//
// Where the hashes come from: the SHA256 field of debian-archive-keyring
// in main/binary-all/Packages of sid (2025.1, also trixie's) and bookworm,
// read from deb.debian.org on 2026-12-07, the indexes checked against
// InRelease files that gpgv had verified with a Debian machine's own
// keyring. The pool keeps a version while a suite ships it; when both are
// gone the fetch says so. To update: on a Debian machine, `apt-get update
// && apt-cache show debian-archive-keyring` prints Version, Filename and
// SHA256, which apt has verified against the signed index; add that
// version here, first.
var archiveKeyrings = []keyringPackage{
	{
		Version: "2025.1",
		Pool:    "pool/main/d/debian-archive-keyring/debian-archive-keyring_2025.1_all.deb",
		SHA256:  "9ea7778e443144ca490668737a8ab22dd3e748bb99e805e22ec055abeb3c7fac",
	},
	{
		Version: "2023.3+deb12u2",
		Pool:    "pool/main/d/debian-archive-keyring/debian-archive-keyring_2023.3+deb12u2_all.deb",
		SHA256:  "f699e2f88dca05212f2a452b58475f2993cb6993dfbafb1d0205a3291eb8b4b8",
	},
}

// keyringMember is the keyring's path in the package (from 2025.1 on a
// link to debian-archive-keyring.pgp, the same file).
const keyringMember = "usr/share/keyrings/debian-archive-keyring.gpg"

// maxKeyringDeb bounds the download; the package is about 180 KB.
const maxKeyringDeb = 16 << 20

// KeyringDir is where a keyring fetched from the archive is kept, beside
// the kernels' private apt trees.
func (c Cache) KeyringDir() string {
	return filepath.Join(c.Dir, "apt", "keyring")
}

// FindKeyring returns the keyring that verifies the suites' Release
// files, and where it came from, for the log: the machine's DebianKeyring
// when it has one, else a copy in the cache, extracted from a
// debian-archive-keyring package fetched from mirror on first use and
// checked against a hash pinned here (archiveKeyrings). The machine's
// own folders are never written.
func FindKeyring(ctx context.Context, cache Cache, mirror string) (keyring, source string, err error) {
	kf := keyringFinder{
		host:   DebianKeyring,
		dir:    cache.KeyringDir(),
		mirror: mirror,
		pins:   archiveKeyrings,
		client: &http.Client{Timeout: 2 * time.Minute},
	}
	return kf.find(ctx)
}

// keyringFinder is FindKeyring's choice with every input a test may
// replace: the machine's keyring, the cache folder, the pins, the client.
type keyringFinder struct {
	host   string
	dir    string
	mirror string
	pins   []keyringPackage
	client *http.Client
}

// kept is where the keyring of p is kept. The name ends in .gpg, which
// apt requires of a binary keyring in signed-by.
func (kf keyringFinder) kept(p keyringPackage) string {
	return filepath.Join(kf.dir, "debian-archive-keyring_"+p.Version+".gpg")
}

func (kf keyringFinder) find(ctx context.Context) (keyring, source string, err error) {
	if _, err := os.Stat(kf.host); err == nil {
		return kf.host, "the machine's own", nil
	}
	for _, p := range kf.pins {
		if _, err := os.Stat(kf.kept(p)); err == nil {
			return kf.kept(p), "from debian-archive-keyring " + p.Version + ", kept in the cache", nil
		}
	}
	if err := os.MkdirAll(kf.dir, 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(kf.dir, "fetch-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	var gone []string
	for _, p := range kf.pins {
		url := kf.mirror + "/debian/" + p.Pool
		deb := filepath.Join(tmp, filepath.Base(p.Pool))
		err := kf.download(ctx, url, deb, p.SHA256)
		if errors.Is(err, errGone) {
			gone = append(gone, url)
			continue
		}
		if err != nil {
			return "", "", err
		}
		if err := extractKeyring(ctx, deb, tmp, kf.kept(p)); err != nil {
			return "", "", err
		}
		return kf.kept(p), fmt.Sprintf("from debian-archive-keyring %s, fetched from %s, sha256 as pinned", p.Version, url), nil
	}
	return "", "", fmt.Errorf("no Debian keyring: %s is missing and the archive no longer has %s; "+
		"install debian-archive-keyring, or pin its current version in archiveKeyrings (internal/vmtest/keyring.go says how)",
		kf.host, strings.Join(gone, ", "))
}

// errGone says the mirror answered 404: Debian has dropped that version.
var errGone = errors.New("not on the mirror")

// download saves url to dst, which it removes again unless its SHA-256
// is want.
func (kf keyringFinder) download(ctx context.Context, url, dst, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := kf.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: %w", url, errGone)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxKeyringDeb))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("%s: %w", url, err)
	}
	// Checked before dpkg-deb reads it: nothing unpinned is unpacked.
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		os.Remove(dst)
		return fmt.Errorf("%s: sha256 %s, but %s is pinned: not the package Debian published", url, got, want)
	}
	return nil
}

// extractKeyring unpacks deb under tmp and copies its keyring to dst.
func extractKeyring(ctx context.Context, deb, tmp, dst string) error {
	x := filepath.Join(tmp, "x")
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "--extract", deb, x).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb --extract %s: %w: %s", deb, err, out)
	}
	if err := copyFile(filepath.Join(x, filepath.FromSlash(keyringMember)), dst); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(deb), err)
	}
	return nil
}
