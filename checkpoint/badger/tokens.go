package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// tokenBlock is how many fencing tokens one write of tokenKey reserves.
const tokenBlock = 1024

// tokenSource hands out the Badger store's fencing tokens. Tokens are
// reserved on disk a block at a time, like a database sequence with a
// cache: tokenKey holds the highest token that may have been handed out,
// and is written (and synced) once per tokenBlock tokens by whoever
// exhausts the block, never inside a lease transaction. So concurrent
// Acquires of different runs touch only their own lease keys and do not
// conflict, while every token is still greater than any handed out before
// by this store, across restarts (tokens left in a block when the store
// closes are skipped). The store is one process's (Badger's directory
// lock), so the reservation on disk is the only state another process
// ever needs.
type tokenSource struct {
	mu     sync.Mutex
	loaded bool
	next   uint64 // the next token to hand out
	limit  uint64 // tokens below limit are reserved on disk
}

// takeToken returns a token greater than floor and than every token taken
// before. Acquire passes the run's current lease token as floor, so a
// lease changing hands gets a greater token even if the store's
// reservation was somehow behind its lease records.
func (s *Store) takeToken(floor uint64) (uint64, error) {
	ts := &s.tokens
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.loaded {
		last, err := s.lastToken()
		if err != nil {
			return 0, err
		}
		ts.next, ts.limit, ts.loaded = last+1, last+1, true
	}
	t := max(ts.next, floor+1)
	if t >= ts.limit {
		hi := t + tokenBlock - 1
		if err := s.roomToWrite(); err != nil {
			return 0, err
		}
		err := s.guard(func() error {
			return s.db.Update(func(txn *badger.Txn) error {
				return txn.Set(tokenKey, binary.AppendUvarint(nil, hi))
			})
		})
		if err == nil {
			err = s.guard(s.db.Sync)
		}
		if err != nil {
			return 0, err
		}
		ts.limit = hi + 1
	}
	ts.next = t + 1
	return t, nil
}

// lastToken is the highest token this store may have handed out: the
// reservation in tokenKey (the last token itself in stores written before
// reservations), or a lease record's token if one is higher.
func (s *Store) lastToken() (uint64, error) {
	var last uint64
	err := s.view(func(txn *badger.Txn) error {
		v, ok, err := getValue(txn, tokenKey)
		if err != nil {
			return err
		}
		if ok {
			t, n := binary.Uvarint(v)
			if n != len(v) {
				return &checkpoint.CorruptError{What: "lease token counter", Err: errors.New("bad varint")}
			}
			last = t
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{kindLease}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			runID, _ := runOfKey(it.Item().Key())
			err := it.Item().Value(func(v []byte) error {
				// A damaged lease is reported when its run is used.
				if l, err := decodeLease(runID, v); err == nil {
					last = max(last, l.Token)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return last, err
}

// conflictBackoff waits a little before a transaction is retried after its
// attempt-th conflict (0 for the first), so that writers colliding on one
// key spread out instead of colliding again: a random wait up to 50µs
// doubled per attempt, at most 5ms. The first retry is immediate.
func conflictBackoff(ctx context.Context, attempt int) error {
	if attempt == 0 {
		return nil
	}
	ceiling := min(50*time.Microsecond<<min(attempt-1, 10), 5*time.Millisecond)
	t := time.NewTimer(rand.N(ceiling) + 1)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
