module github.com/ebpf-zc/ebpf

go 1.25.0

require (
	github.com/cilium/ebpf v0.20.0
	golang.org/x/sys v0.43.0
)
