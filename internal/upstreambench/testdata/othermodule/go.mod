// A module that is not cilium/ebpf, for upstreambench's path checks.
module example.com/other

go 1.22
