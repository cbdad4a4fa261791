// Package release holds the checks a release of github.com/ebpf-zc/ebpf
// must pass that are about what it ships rather than how it behaves: the
// module zip an importer's go command downloads stays small and holds
// the library, its tests and the docs a user reads (zip_test.go). The
// API checks are a command, internal/tools/cmd/apicheck, since they
// load other modules' packages.
package release
