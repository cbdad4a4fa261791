// Package release holds what a release of github.com/ebpf-zc/ebpf needs
// beyond its code. A release is the commit that adds its entry to
// CHANGELOG.md (the repository carries no tags yet), and README.md's
// install line names that commit. The package reads both files
// (ParseChangelog, ParseInstall, Mentions), checks that they agree and
// that README.md documents nothing the release lacks (State.CheckVersions,
// State.CheckNames), cuts a release in two commits (CutRelease, for
// internal/tools/cmd/release), and serves a commit from a file GOPROXY
// (WriteProxy). Its tests run those checks on this checkout, follow
// README.md's install line as a user would (importer_test.go), and hold
// the module zip an importer downloads small (zip_test.go). The API
// checks against cilium/ebpf are a command, internal/tools/cmd/apicheck.
package release
