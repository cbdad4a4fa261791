//go:build !libbpf

package ringbuf_test

import (
	"errors"

	"github.com/cilium/ebpf"
)

var errNoLibbpf = errors.New("libbpf mode needs -tags libbpf (and libbpf-dev)")

func openLibbpf(*ebpf.Map) (drainer, error) { return nil, errNoLibbpf }
