package vmtest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
)

// InitPackage is the guest init, relative to the module root.
const InitPackage = "./internal/cmd/vminit"

// staticEnv builds for the guest: static (no libc in the initramfs) and
// for the architecture the runner boots.
func staticEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
}

// BuildInit builds the guest init as a static binary at out.
func BuildInit(ctx context.Context, moduleDir, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, InitPackage)
	cmd.Dir = moduleDir
	cmd.Env = staticEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build guest init: %w\n%s", err, b)
	}
	return nil
}

// GuestDir is the folder a package's test binary runs in inside the
// guest, holding the binary and a copy of its testdata.
func GuestDir(p TestPackage) string {
	return path.Join("/pkgs", p.Name())
}

// GuestBinary is the path of a package's test binary inside the guest.
func GuestBinary(p TestPackage) string {
	return path.Join(GuestDir(p), path.Base(p.ImportPath)+".test")
}

// StageTest builds the package's tests as a static binary into the
// initramfs staging tree and copies its testdata folder next to it, since
// a test binary expects to run in its package folder. It returns the
// compiler output on failure.
func StageTest(ctx context.Context, moduleDir, stage string, p TestPackage) (string, error) {
	if p.LoadError != "" {
		return p.LoadError, fmt.Errorf("go list: %s", p.LoadError)
	}
	bin := filepath.Join(stage, filepath.FromSlash(GuestBinary(p)))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, p.ImportPath)
	cmd.Dir = moduleDir
	cmd.Env = staticEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		return string(b), fmt.Errorf("go test -c %s: %w", p.ImportPath, err)
	}
	td := filepath.Join(p.Dir, "testdata")
	if fi, err := os.Stat(td); err == nil && fi.IsDir() {
		if err := copyTree(td, filepath.Join(filepath.Dir(bin), "testdata")); err != nil {
			return "", fmt.Errorf("copy %s: %w", td, err)
		}
	}
	return "", nil
}

// copyTree copies a folder of regular files, following symbolic links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		return copyFile(p, target)
	})
}
