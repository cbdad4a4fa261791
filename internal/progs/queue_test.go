//go:build linux

package progs

import "testing"

// TestQueueProducerRecords fills a queue past its length and checks that
// the first entries records come out in order and the rest were counted
// as dropped, not evicting older ones.
func TestQueueProducerRecords(t *testing.T) {
	const size, entries = 36, 8
	q, err := NewQueue(size, entries)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { q.Close() })
	p, err := NewQueueProducer(QueueSpec{Queue: q, Size: size, Pattern: true})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	if err := p.Run(entries + 3); err != nil {
		t.Fatal(err)
	}
	produced, dropped, err := p.Counts()
	if err != nil || produced < entries+3 || dropped != produced-entries {
		t.Fatalf("produced %d, dropped %d (%v); want %d kept", produced, dropped, err, entries)
	}
	value := make([]byte, size)
	for want := range uint64(entries) {
		if err := q.LookupAndDelete(nil, value); err != nil {
			t.Fatal(err)
		}
		if seq, err := CheckRecord(value, size, true); err != nil || seq != want {
			t.Fatalf("value %d: seq %d, %v", want, seq, err)
		}
	}
}

// TestQueueDrainer checks that the drainer empties a queue, and that
// running it on an empty queue is harmless.
func TestQueueDrainer(t *testing.T) {
	q, err := NewQueue(16, 100)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { q.Close() })
	p, err := NewQueueProducer(QueueSpec{Queue: q, Size: 16})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	d, err := NewQueueDrainer(q)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { d.Close() })
	if err := p.Run(50); err != nil {
		t.Fatal(err)
	}
	if err := d.Drain(60); err != nil {
		t.Fatal(err)
	}
	if err := q.LookupAndDelete(nil, make([]byte, 16)); err == nil {
		t.Fatal("queue not empty after the drain")
	}
}

// TestQueueProducerSizeMismatch checks that a record size other than the
// queue's value size is refused.
func TestQueueProducerSizeMismatch(t *testing.T) {
	q, err := NewQueue(16, 4)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { q.Close() })
	if _, err := NewQueueProducer(QueueSpec{Queue: q, Size: 24}); err == nil {
		t.Fatal("no error for 24-byte records in a queue of 16-byte values")
	}
}

// TestProducerFill: Fill counts the records a run placed, not those the
// full queue refused, and numbers the first of them.
func TestProducerFill(t *testing.T) {
	const size, entries = 16, 8
	q, err := NewQueue(size, entries)
	skipIfNoBPF(t, err)
	t.Cleanup(func() { q.Close() })
	p, err := NewQueueProducer(QueueSpec{Queue: q, Size: size})
	skipIfNoBPF(t, err)
	t.Cleanup(func() { p.Close() })
	placed, first, err := p.Fill(5)
	if err != nil || first != 0 || placed < 5 || placed > entries {
		t.Fatalf("first Fill(5): %d placed from %d (%v); want 5 to %d from 0", placed, first, err, entries)
	}
	more, next, err := p.Fill(entries)
	if err != nil || next < uint64(placed) || more != entries-placed {
		t.Fatalf("second Fill(%d): %d placed from %d (%v); want %d from %d on", entries, more, next, err, entries-placed, placed)
	}
	if n, _, err := p.Fill(1); err != nil || n != 0 {
		t.Fatalf("Fill of a full queue placed %d (%v)", n, err)
	}
}
