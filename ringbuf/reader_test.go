package ringbuf

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ebpf-zc/ebpf/internal/progs"
)

func TestReadInOrder(t *testing.T) {
	for _, method := range []progs.Method{progs.Reserve, progs.Output} {
		t.Run(method.String(), func(t *testing.T) {
			m := newRingMap(t, 4096)
			p := newProducer(t, progs.RingbufSpec{Ring: m, Size: 40, Method: method, Pattern: true})
			r := newTestReader(t, m)
			produce(t, p, 10)
			for want := uint64(0); want < 10; want++ {
				rec, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				seq, err := progs.CheckRecord(rec.RawSample, 40, true)
				if err != nil {
					t.Fatal(err)
				}
				if seq != want {
					t.Fatalf("record %d has sequence number %d", want, seq)
				}
				if wantRemaining := int(9-want) * 48; rec.Remaining != wantRemaining {
					t.Errorf("record %d: Remaining %d, want %d", want, rec.Remaining, wantRemaining)
				}
			}
			if n := r.AvailableBytes(); n != 0 {
				t.Errorf("AvailableBytes after the last record: %d", n)
			}
			r.SetDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("Read on an empty ring past the deadline: %v", err)
			}
		})
	}
}
