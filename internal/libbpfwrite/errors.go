package libbpfwrite

import "errors"

// ErrNoLibbpf is what Open returns in a build without -tags libbpf.
var ErrNoLibbpf = errors.New("libbpf mode needs -tags libbpf (cgo and libbpf-dev)")
