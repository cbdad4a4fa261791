// A fake of github.com/cilium/ebpf laid out like it, for the tests of
// upstreambench: a root package and a ringbuf package with main's reading
// API, no code behind it and no requirements, so no test needs the network.
module github.com/cilium/ebpf

go 1.22
