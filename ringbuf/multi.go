package ringbuf

import (
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/cilium/ebpf"
)

// MultiReader reads several ring buffer maps, of any sizes, as one stream
// through one epoll, as libbpf's ring_buffer__add does, each ring with
// Reader's contract. Rings with records take turns, a batch each; records of
// different rings come in no particular order.
type MultiReader struct {
	*rings
}

// NewMultiReader reads the ring buffer maps given, at least one, each
// once; a record's [Record.Ring] is its map's index in the list.
func NewMultiReader(maps ...*ebpf.Map) (*MultiReader, error) {
	keys := make([]int, len(maps))
	for i := range keys {
		keys[i] = i
	}
	mr, err := newMultiReader(maps, keys)
	if err != nil {
		return nil, fmt.Errorf("ringbuf: %w", err)
	}
	return mr, nil
}

// NewMultiReaderFromMapOfMaps reads the ring buffers in an array or hash of
// maps with 4-byte keys at the start, each once; [Record.Ring] is the key.
func NewMultiReaderFromMapOfMaps(outer *ebpf.Map) (*MultiReader, error) {
	maps, keys, err := innerMaps(outer)
	defer func() {
		for _, m := range maps {
			m.Close() // the reader holds its own references: the mappings
		}
	}()
	if err == nil {
		var mr *MultiReader
		if mr, err = newMultiReader(maps, keys); err == nil {
			return mr, nil
		}
		err = fmt.Errorf("map of maps: %w", err)
	}
	return nil, fmt.Errorf("ringbuf: %w", err)
}

// innerMaps opens outer's ring buffers, also returning those opened on error.
func innerMaps(outer *ebpf.Map) (maps []*ebpf.Map, keys []int, err error) {
	if outer == nil {
		return nil, nil, errors.New("nil map")
	}
	if t := outer.Type(); t != ebpf.ArrayOfMaps && t != ebpf.HashOfMaps {
		return nil, nil, fmt.Errorf("map type %s is not %s or %s", t, ebpf.ArrayOfMaps, ebpf.HashOfMaps)
	}
	if outer.KeySize() != 4 {
		return nil, nil, fmt.Errorf("map of maps with %d-byte keys: want 4", outer.KeySize())
	}
	var key, id uint32 // read from user space, a value is the inner map's ID
	entries := outer.Iterate()
	for entries.Next(&key, &id) {
		inner, err := ebpf.NewMapFromID(ebpf.MapID(id))
		if err != nil {
			return maps, nil, fmt.Errorf("map of maps entry %d: %w", key, err)
		}
		maps, keys = append(maps, inner), append(keys, int(key))
		if inner.Type() != ebpf.RingBuf {
			return maps, nil, fmt.Errorf("map of maps entry %d holds a %s, not a %s", key, inner.Type(), ebpf.RingBuf)
		}
	}
	if err := entries.Err(); err != nil {
		return maps, nil, fmt.Errorf("read map of maps: %w", err)
	}
	return maps, keys, nil
}

// newMultiReader refuses a ring given twice, by any handle, before opening.
func newMultiReader(maps []*ebpf.Map, keys []int) (*MultiReader, error) {
	if len(maps) == 0 {
		return nil, errors.New("no ring buffers to read")
	}
	seen := make(map[ebpf.MapID]int, len(maps))
	for i, m := range maps {
		if err := checkMap(m); err != nil {
			return nil, fmt.Errorf("ring %d: %w", keys[i], err)
		}
		info, err := m.Info()
		if err != nil {
			return nil, fmt.Errorf("ring %d: %w", keys[i], err)
		}
		id, ok := info.ID()
		if !ok {
			continue // the kernel tells no IDs (before 4.13): nothing to compare
		}
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("ring %d and ring %d are the same map (ID %d)", keys[j], keys[i], id)
		}
		seen[id] = i
	}
	rs := &rings{}
	if err := rs.open(maps, keys); err != nil {
		return nil, err
	}
	return &MultiReader{rs}, nil
}

// Rings returns how many rings the MultiReader reads.
func (mr *MultiReader) Rings() int { return len(mr.consumers) }

// Positions is [Reader.Positions] for ring, as [Record.Ring] names it.
func (mr *MultiReader) Positions(ring int) (RingPositions, error) {
	for i, key := range mr.keys {
		if key == ring {
			return mr.positions(i)
		}
	}
	return RingPositions{}, fmt.Errorf("ringbuf: positions: the MultiReader reads no ring %d", ring)
}

// SetDeadline is [Reader.SetDeadline] for every ring at once.
func (mr *MultiReader) SetDeadline(t time.Time) { mr.engine.SetDeadline(t) }

// Flush is [Reader.Flush] for every ring at once.
func (mr *MultiReader) Flush() error { return mr.engine.Flush() }

// Close is [Reader.Close] for every ring at once.
func (mr *MultiReader) Close() error { return mr.engine.Close(nil) }

// ReadinessFD is [Reader.ReadinessFD] for every ring at once: readable while
// one holds records no loop body holds, a Flush waits, or once closed.
func (mr *MultiReader) ReadinessFD() (int, error) { return mr.readinessFD() }

// Records is [Reader.Records] over every ring ([Record.Ring]).
func (mr *MultiReader) Records() iter.Seq2[*Record, error] { return mr.records }

// Batches is [Reader.Batches] over every ring ([Batch.Ring]).
func (mr *MultiReader) Batches() iter.Seq2[*Batch, error] { return mr.batches }
