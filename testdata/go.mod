// The committed benchmark results, plots and A/B data: a module of its
// own, holding no Go code, so that the go command leaves this folder out
// of the module zip an importer of github.com/ebpf-zc/ebpf downloads.
// The paths stay the same: docs link here, make bench-tables IN=… reads
// here. internal/tools/release checks the zip.
module github.com/ebpf-zc/ebpf/testdata

go 1.25.0
