package readers

// Batcher is one loop's batch as a reader keeps it. The engine calls its
// methods with Mu held, once per batch, never per record.
type Batcher interface {
	// Finish ends the batch the loop holds, if it holds one: what the
	// loop read is consumed, the rest given back, and the position
	// published. stalled reports that the loop read nothing before a
	// record a producer is still writing, so the next claim backs off
	// first instead of claiming the same record again at once.
	Finish() (stalled bool)
	// Claim claims the loop's next batch. busy reports that the next
	// record is still being written.
	Claim() (ok, busy bool, err error)
}

// Loop is the batch loop of every reader's iterators (ringbuf's Batches
// and Records, perf's Records). It counts a read in progress, then claims
// a batch, waiting for one as a read does, and calls body with it (err
// nil) until body returns false, or once with the error that ended the
// wait. However the loop stops (a break, an error, a panic in body, which
// runs without Mu), the batch is finished and what the loop consumed is
// published before Loop returns.
func (e *Engine) Loop(b Batcher, body func(err error) bool) {
	var op WaitState
	if err := e.Begin(&op); err != nil {
		body(err)
		return
	}
	defer e.endLoop(b, &op)
	for {
		if err := e.nextBatch(b, &op); err != nil {
			body(err)
			return
		}
		if !body(nil) {
			return
		}
	}
}

func (e *Engine) nextBatch(b Batcher, op *WaitState) error {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.ClaimLocked(op, b.Finish(), b.Claim)
}

func (e *Engine) endLoop(b Batcher, op *WaitState) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	b.Finish()
	e.EndLoopLocked(op)
}
