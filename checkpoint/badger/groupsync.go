package badger

import "sync"

// groupSync batches the flushes of durable (PutOptions.Sync) writes: group
// commit. A writer whose transaction has committed calls wait; it joins the
// batch that has not started flushing yet, and the first member to find no
// flush running flushes for the whole batch. So one flush covers every
// commit that finished before that flush started, at most one flush runs at
// a time, and no writer returns before a flush that started after its
// commit has finished. A lone writer flushes at once, as it would alone;
// writers that arrive while a flush runs share the next one.
type groupSync struct {
	// flush replaces the store's flush in tests (fault injection); nil
	// means Store.flushStore.
	flush func(full bool) error

	mu      sync.Mutex
	cond    sync.Cond
	running bool       // a batch is being flushed
	pending *syncBatch // the batch new members join; nil when none
}

// syncBatch is the set of writers one flush makes durable.
type syncBatch struct {
	full    bool // a member wrote to Badger's value log, not only its WAL
	members int
	done    bool
	err     error
}

// wait returns once a flush that started after the call has finished, with
// that flush's error. full asks for a flush of the value log too.
func (g *groupSync) wait(full bool, flush func(full bool) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond.L == nil {
		g.cond.L = &g.mu
	}
	b := g.pending
	if b == nil {
		b = &syncBatch{}
		g.pending = b
	}
	b.full = b.full || full
	b.members++
	for !b.done {
		if g.running || g.pending != b {
			g.cond.Wait()
			continue
		}
		// Lead: from here on new writers join the next batch.
		g.running, g.pending = true, nil
		g.mu.Unlock()
		err := flush(b.full)
		g.mu.Lock()
		g.running, b.done, b.err = false, true, err
		g.cond.Broadcast()
	}
	return b.err
}

// waiting returns how many writers are in the batch that has not started
// flushing yet (for tests).
func (g *groupSync) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil {
		return 0
	}
	return g.pending.members
}
