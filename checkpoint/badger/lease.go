package badger

import (
	"context"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// batchKeys bounds the keys Delete and Prune remove per transaction.
const batchKeys = 2000

// Delete implements checkpoint.Store. Large runs are removed over several
// transactions, oldest keys first; the run index goes last, so an
// interrupted Delete leaves a run that a later Delete finishes.
func (s *Store) Delete(ctx context.Context, runID string) error {
	s.forgetBlobs(runID)
	defer s.forgetBlobs(runID)
	for {
		var done bool
		err := s.update(ctx, func(txn *badger.Txn) error {
			n := 0
			for _, kind := range []byte{kindWrite, kindCheckpoint, kindBlob} {
				m, err := deletePrefix(txn, runPrefix(kind, runID), nil, batchKeys-n)
				if err != nil {
					return err
				}
				n += m
			}
			if done = n < batchKeys; !done {
				return nil
			}
			if err := txn.Delete(runPrefix(kindLease, runID)); err != nil {
				return err
			}
			if err := txn.Delete(runPrefix(kindSummary, runID)); err != nil {
				return err
			}
			return txn.Delete(runPrefix(kindIndex, runID))
		})
		if err != nil {
			return err
		}
		if done {
			s.collectValueLog()
			return nil
		}
	}
}

// collectValueLog lets Badger reclaim value-log space (values over 64 KiB)
// freed by Delete or Prune. It is best effort: nothing to rewrite is the
// usual answer.
func (s *Store) collectValueLog() {
	for range 4 {
		if s.guard(func() error { return s.db.RunValueLogGC(0.5) }) != nil {
			return
		}
	}
}

// deletePrefix deletes up to limit keys under prefix (and before end, when
// end is not nil), returning how many it deleted.
func deletePrefix(txn *badger.Txn, prefix, end []byte, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	var keys [][]byte
	for it.Rewind(); it.Valid() && len(keys) < limit; it.Next() {
		k := it.Item().KeyCopy(nil)
		if end != nil && string(k) >= string(end) {
			break
		}
		keys = append(keys, k)
	}
	it.Close()
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// Prune implements checkpoint.Store. Checkpoints older than the newest keep are
// removed with their writes, then blobs no remaining checkpoint refers to.
func (s *Store) Prune(ctx context.Context, runID string, keep int) error {
	if keep < 1 {
		return fmt.Errorf("%w: prune run %s keeping %d checkpoints (must keep at least 1)", checkpoint.ErrInvalid, runID, keep)
	}
	s.forgetBlobs(runID)
	defer s.forgetBlobs(runID)
	for {
		var done bool
		err := s.update(ctx, func(txn *badger.Txn) error {
			x, ok, err := readIndex(txn, runID)
			if err != nil || !ok || x.latest <= uint64(keep) {
				done = true
				return err
			}
			cut := x.latest - uint64(keep) + 1 // first seq kept
			n, err := deletePrefix(txn, runPrefix(kindWrite, runID), writesPrefix(runID, cut), batchKeys)
			if err != nil {
				return err
			}
			m, err := deletePrefix(txn, runPrefix(kindCheckpoint, runID), cpKey(runID, cut), batchKeys-n)
			done = n+m < batchKeys
			return err
		})
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	if err := s.collectBlobs(ctx, runID); err != nil {
		return err
	}
	s.collectValueLog()
	return nil
}

// collectBlobs deletes the run's blobs that no checkpoint refers to. It
// reads the run index, so a Put that commits meanwhile makes it retry.
func (s *Store) collectBlobs(ctx context.Context, runID string) error {
	return s.update(ctx, func(txn *badger.Txn) error {
		index, hasIndex, err := getValue(txn, runPrefix(kindIndex, runID))
		if err != nil {
			return err
		}
		used := make(map[blobRef]bool)
		prefix := runPrefix(kindCheckpoint, runID)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		for it.Rewind(); it.Valid(); it.Next() {
			seq, _ := seqAt(it.Item().Key(), len(prefix))
			err := it.Item().Value(func(v []byte) error {
				c, err := decodeCheckpoint(runID, seq, v)
				for _, r := range c.refs {
					used[r] = true
				}
				return err
			})
			if err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		bp := runPrefix(kindBlob, runID)
		var unused [][]byte
		it = txn.NewIterator(badger.IteratorOptions{Prefix: bp})
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			var r blobRef
			copy(r[:], k[len(bp):])
			if !used[r] {
				unused = append(unused, it.Item().KeyCopy(nil))
			}
		}
		it.Close()
		for _, k := range unused {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		if len(unused) > 0 && hasIndex {
			// Rewritten unchanged so that a Put that commits meanwhile
			// conflicts even when it skipped looking up a deleted blob
			// (see knownBlobs).
			return txn.Set(runPrefix(kindIndex, runID), index)
		}
		return nil
	})
}

// Acquire implements checkpoint.Store. The transaction reads and writes only the
// run's lease key; a new token comes from the store's tokenSource, so
// Acquires of different runs never conflict.
func (s *Store) Acquire(ctx context.Context, runID string, owner checkpoint.Owner, ttl time.Duration) (checkpoint.Lease, error) {
	var out checkpoint.Lease
	err := s.update(ctx, func(txn *badger.Txn) error {
		cur, err := readLease(txn, runID)
		if err != nil {
			return err
		}
		l, err := s.env.Acquire(runID, cur, owner, ttl, 0)
		if err != nil {
			return err
		}
		if cur == nil || cur.Owner.ID != owner.ID {
			// The lease changes hands. Taken after reading cur, so a lease
			// committed meanwhile by another Acquire (with an older token)
			// makes this transaction conflict and retry.
			var floor uint64
			if cur != nil {
				floor = cur.Token
			}
			if l.Token, err = s.takeToken(floor); err != nil {
				return err
			}
		}
		out = l
		return txn.Set(runPrefix(kindLease, runID), encodeLease(l))
	})
	return out, err
}

// Renew implements checkpoint.Store.
func (s *Store) Renew(ctx context.Context, lease checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	var out checkpoint.Lease
	err := s.update(ctx, func(txn *badger.Txn) error {
		cur, err := readLease(txn, lease.RunID)
		if err != nil {
			return err
		}
		out, err = s.env.Renew(cur, lease, ttl)
		if err != nil {
			return err
		}
		return txn.Set(runPrefix(kindLease, lease.RunID), encodeLease(out))
	})
	return out, err
}

// Release implements checkpoint.Store.
func (s *Store) Release(ctx context.Context, lease checkpoint.Lease) error {
	return s.update(ctx, func(txn *badger.Txn) error {
		cur, err := readLease(txn, lease.RunID)
		if err != nil || cur == nil || cur.Token != lease.Token || cur.Owner.ID != lease.Owner.ID {
			return err
		}
		s.dropKnownRun(lease.RunID, lease.Token)
		return txn.Delete(runPrefix(kindLease, lease.RunID))
	})
}
