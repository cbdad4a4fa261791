package vmtest

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// PackInitramfs writes the staging tree as an uncompressed "newc" cpio
// archive, the format the kernel unpacks into its initial root file
// system (Documentation/driver-api/early-userspace/buffer-format.rst).
// The archive is made by GNU cpio; it is left uncompressed because
// unpacking costs less than decompressing under emulation.
func PackInitramfs(ctx context.Context, stage, out string) error {
	if _, err := exec.LookPath("cpio"); err != nil {
		return fmt.Errorf("cpio not found: install Debian's cpio package: %w", err)
	}
	var names bytes.Buffer
	err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(stage, p)
		if err != nil || rel == "." {
			return err
		}
		names.WriteString(rel)
		names.WriteByte(0)
		return nil
	})
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	// -R 0:0: files belong to root in the guest whoever built them;
	// --reproducible: no inode or device numbers from the host.
	cmd := exec.CommandContext(ctx, "cpio", "--create", "--format=newc", "--null", "--quiet", "--reproducible", "-R", "0:0")
	cmd.Dir = stage
	cmd.Stdin = &names
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cpio: %w: %s", err, stderr.String())
	}
	return f.Close()
}
