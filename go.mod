module github.com/ebpf-zc/ebpf

go 1.26.8

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/cilium/ebpf v0.22.0 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	golang.org/x/sys v0.49.0 // indirect
)

tool golang.org/x/perf/cmd/benchstat
