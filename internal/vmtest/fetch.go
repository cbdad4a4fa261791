package vmtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Archive is where kernels are fetched from: a Debian mirror and the
// keyring that verifies its suites.
type Archive struct {
	// Mirror is the base URL, such as "http://deb.debian.org".
	Mirror string
	// Keyring is the keyring file apt checks the Release files with.
	Keyring string
	// MirrorSource and KeyringSource say where each came from (FindMirror,
	// FindKeyring), for the log.
	MirrorSource, KeyringSource string
}

// FindArchive picks the mirror from the machine's apt sources
// ([FindMirror]) and the keyring ([FindKeyring]), which on a machine
// without Debian's keyring is fetched from that mirror into the cache.
func FindArchive(ctx context.Context, cache Cache) (Archive, error) {
	a := Archive{}
	a.Mirror, a.MirrorSource = FindMirror(AptSourceFiles())
	var err error
	a.Keyring, a.KeyringSource, err = FindKeyring(ctx, cache, a.Mirror)
	if err != nil {
		return Archive{}, fmt.Errorf("mirror %s (%s): %w", a.Mirror, a.MirrorSource, err)
	}
	return a, nil
}

// String says which mirror and keyring, and where each came from.
func (a Archive) String() string {
	return fmt.Sprintf("mirror %s (%s), keyring %s (%s)", a.Mirror, a.MirrorSource, a.Keyring, a.KeyringSource)
}

// Fetch resolves the current image of kernel k through MetaPackage,
// downloads it from archive with a private apt configuration and stores its vmlinuz
// in the cache. The meta package depends on linux-image-<abi>; up to 6.x
// that package holds the image, while from 7.x on it is itself a small
// package whose image sits in linux-binary-<abi>. Fetch follows the
// dependencies until it finds a vmlinuz, so both layouts work.
func Fetch(ctx context.Context, cache Cache, k Kernel, archive Archive, log io.Writer) (*CachedKernel, error) {
	apt := &Apt{Root: cache.AptDir(k.Name), Mirror: archive.Mirror, Keyring: archive.Keyring, Suites: k.Suites, Log: log}
	if err := apt.Update(ctx); err != nil {
		return nil, err
	}
	meta, err := apt.Candidate(ctx, MetaPackage)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(cache.Dir, "fetch-"+k.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	queue := imageDeps(meta)
	seen := map[string]bool{}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		st, err := apt.Candidate(ctx, pkg)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "vmtest: %s: looking for the image in %s %s\n", k.Name, pkg, st["Version"])
		deb, err := apt.Download(ctx, pkg, st["Version"], tmp)
		if err != nil {
			return nil, err
		}
		listing, err := exec.CommandContext(ctx, "dpkg-deb", "--contents", deb).Output()
		if err != nil {
			return nil, fmt.Errorf("dpkg-deb --contents %s: %w", deb, err)
		}
		member, release, ok := FindVmlinuz(string(listing))
		if !ok {
			queue = append(queue, imageDeps(st)...)
			continue
		}
		ck := &CachedKernel{
			Name:      k.Name,
			Package:   pkg,
			Version:   st["Version"],
			Release:   release,
			FetchedAt: time.Now().UTC().Truncate(time.Second),
		}
		for _, s := range k.Suites {
			ck.Suites = append(ck.Suites, s.Name)
		}
		if err := extractImage(ctx, deb, member, tmp, cache.KernelDir(k.Name)); err != nil {
			return nil, err
		}
		if err := cache.store(ck); err != nil {
			return nil, err
		}
		// The package lists take far more room than the kernel (about
		// 100 MiB per suite pair) and a refresh downloads them anew.
		os.RemoveAll(apt.Root)
		return cache.Load(k.Name)
	}
	return nil, fmt.Errorf("%s: no vmlinuz in %s or the packages it depends on", k.Name, MetaPackage)
}

// imageDeps picks the dependencies of a kernel package that may hold the
// image: linux-image-* and linux-binary-*, not debug symbols.
func imageDeps(st Stanza) []string {
	var out []string
	for _, d := range ParseDepends(st["Depends"]) {
		if (strings.HasPrefix(d.Name, "linux-image-") || strings.HasPrefix(d.Name, "linux-binary-")) &&
			!strings.HasSuffix(d.Name, "-dbg") {
			out = append(out, d.Name)
		}
	}
	return out
}

// FindVmlinuz looks through a `dpkg-deb --contents` listing for the
// kernel image and returns its member path and the kernel release. Debian
// ships it as ./boot/vmlinuz-<release> up to 6.x and as
// ./usr/lib/modules/<release>/vmlinuz from 7.x on.
func FindVmlinuz(listing string) (member, release string, ok bool) {
	sc := bufio.NewScanner(strings.NewReader(listing))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "-") {
			continue // directories and links
		}
		p := f[len(f)-1]
		clean := strings.TrimPrefix(p, "./")
		dir, base := path.Split(clean)
		switch {
		case dir == "boot/" && strings.HasPrefix(base, "vmlinuz-"):
			return p, strings.TrimPrefix(base, "vmlinuz-"), true
		case base == "vmlinuz" && strings.HasPrefix(dir, "usr/lib/modules/"), base == "vmlinuz" && strings.HasPrefix(dir, "lib/modules/"):
			return p, path.Base(dir), true
		}
	}
	return "", "", false
}

// extractImage unpacks deb under tmp and moves the image (and the kernel
// config next to it, when the package has one) into dir.
func extractImage(ctx context.Context, deb, member, tmp, dir string) error {
	x := filepath.Join(tmp, "x")
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "--extract", deb, x).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb --extract %s: %w: %s", deb, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Drop an older kernel.json first, so a cut-short fetch leaves the
	// entry uncached rather than pointing at a mixed-up image.
	os.Remove(filepath.Join(dir, kernelInfoFile))
	src := filepath.Join(x, filepath.FromSlash(strings.TrimPrefix(member, "./")))
	if err := copyFile(src, filepath.Join(dir, vmlinuzFile)); err != nil {
		return err
	}
	if cfgs, _ := filepath.Glob(filepath.Join(x, "boot", "config-*")); len(cfgs) == 1 {
		if err := copyFile(cfgs[0], filepath.Join(dir, "config")); err != nil {
			return err
		}
	}
	return nil
}
