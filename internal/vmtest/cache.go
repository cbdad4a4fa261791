package vmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Cache is the folder that keeps fetched kernels and the private apt
// trees, .cache/vmtest at the repository root (git-ignored). Once a
// kernel is there, runs use it without touching the network.
type Cache struct {
	Dir string
}

// CachedKernel describes a kernel image in the cache.
type CachedKernel struct {
	// Name is the matrix entry, such as "6.1".
	Name string `json:"name"`
	// Package is the Debian package the image came from, and Version its
	// Debian version.
	Package string `json:"package"`
	Version string `json:"version"`
	// Release is the kernel's release string, what uname -r prints.
	Release string `json:"release"`
	// Suites are the suites the image was resolved from.
	Suites []string `json:"suites"`
	// FetchedAt is when the image was downloaded (UTC).
	FetchedAt time.Time `json:"fetched_at"`

	// Vmlinuz is the image's path; set when loaded, not stored.
	Vmlinuz string `json:"-"`
}

const (
	kernelInfoFile = "kernel.json"
	vmlinuzFile    = "vmlinuz"
)

// KernelDir is where the named kernel is kept.
func (c Cache) KernelDir(name string) string {
	return filepath.Join(c.Dir, "kernels", name)
}

// AptDir is the private apt tree used to fetch the named kernel.
func (c Cache) AptDir(name string) string {
	return filepath.Join(c.Dir, "apt", name)
}

// Load returns the cached kernel of that name, or an error that matches
// os.ErrNotExist when it is not cached. The info file is written last by
// a fetch, so a fetch cut short is never taken for a cached kernel.
func (c Cache) Load(name string) (*CachedKernel, error) {
	dir := c.KernelDir(name)
	b, err := os.ReadFile(filepath.Join(dir, kernelInfoFile))
	if err != nil {
		return nil, err
	}
	var ck CachedKernel
	if err := json.Unmarshal(b, &ck); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, kernelInfoFile), err)
	}
	ck.Vmlinuz = filepath.Join(dir, vmlinuzFile)
	if _, err := os.Stat(ck.Vmlinuz); err != nil {
		return nil, err
	}
	return &ck, nil
}

// Cached lists the kernels of matrix that are in the cache, in matrix
// order.
func (c Cache) Cached(matrix []Kernel) []*CachedKernel {
	var out []*CachedKernel
	for _, k := range matrix {
		if ck, err := c.Load(k.Name); err == nil {
			out = append(out, ck)
		}
	}
	return out
}

// store records ck as cached; the image must already be in place.
func (c Cache) store(ck *CachedKernel) error {
	b, err := json.MarshalIndent(ck, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(c.KernelDir(ck.Name), kernelInfoFile)
	if err := os.WriteFile(p+".tmp", append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// IsNotCached reports whether err says a kernel is not in the cache.
func IsNotCached(err error) bool { return errors.Is(err, os.ErrNotExist) }

// copyFile copies a regular file, through a temporary name so a reader
// never sees half of it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(dst+".tmp", dst)
}
