package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// getValue returns a copy of key's value, or nil and false when absent.
func getValue(txn *badger.Txn, key []byte) ([]byte, bool, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := item.ValueCopy(nil)
	return v, err == nil, err
}

func readIndex(txn *badger.Txn, runID string) (runIndex, bool, error) {
	v, ok, err := getValue(txn, runPrefix(kindIndex, runID))
	if !ok || err != nil {
		return runIndex{}, false, err
	}
	x, err := decodeIndex(runID, v)
	return x, err == nil, err
}

func readLease(txn *badger.Txn, runID string) (*Lease, error) {
	v, ok, err := getValue(txn, runPrefix(kindLease, runID))
	if !ok || err != nil {
		return nil, err
	}
	l, err := decodeLease(runID, v)
	if err != nil {
		return nil, err
	}
	return &l, nil
}

func fenceTxn(txn *badger.Txn, runID string, fence uint64) error {
	if fence == 0 {
		return nil
	}
	l, err := readLease(txn, runID)
	if err != nil {
		return err
	}
	return checkFence(runID, l, fence)
}

// synced makes a committed write durable when opts.Sync asks for it. It
// shares the flush with the writes of other goroutines committed meanwhile
// (see groupSync). walOnly says the write put nothing in Badger's value log
// (no value over 64 KiB), so flushing the write-ahead log is enough.
func (s *Badger) synced(err error, opts PutOptions, walOnly bool) error {
	if err != nil || !opts.Sync || s.opts.SyncWrites {
		return err
	}
	flush := s.syncer.flush
	if flush == nil {
		flush = s.flushStore
	}
	return s.syncer.wait(!walOnly, flush)
}

// flushStore makes every committed write durable: the write-ahead logs
// only, unless full asks for the value log too or flushing the logs fails.
func (s *Badger) flushStore(full bool) error {
	if !full && s.syncWAL() == nil {
		return nil
	}
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("checkpoint: sync store %s: %w", s.dir, err)
	}
	return nil
}

// syncWAL flushes Badger's memtable logs (*.mem) with fdatasync. Badger's
// own Sync also flushes the value log, which costs a second device flush
// even when nothing was written there. A log that vanished was flushed to a
// table, which Badger syncs before removing the log. Any other failure
// makes the caller fall back to db.Sync.
func (s *Badger) syncWAL() error {
	logs, err := filepath.Glob(filepath.Join(s.dir, "*.mem"))
	if err != nil || len(logs) == 0 {
		return errors.New("no memtable log found")
	}
	fresh := false
	for _, name := range logs {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = datasync(f)
		f.Close()
		if err != nil {
			return err
		}
		fresh = fresh || !s.walSeen(name)
	}
	// A log created since the last sync is durable only once its directory
	// entry is (Badger syncs the directory for it in the background).
	if fresh {
		d, err := os.Open(s.dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return err
		}
		s.markWALSeen(logs)
	}
	return nil
}

func (s *Badger) walSeen(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wals[name]
}

func (s *Badger) markWALSeen(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wals == nil {
		s.wals = make(map[string]bool)
	}
	for _, n := range names {
		s.wals[n] = true
	}
}

// Put implements Store.
func (s *Badger) Put(ctx context.Context, cp Checkpoint, opts PutOptions) error {
	for name, v := range cp.Values {
		if len(v) > MaxValueSize {
			return fmt.Errorf("%w: run %s seq %d: value %q is %d bytes, over MaxValueSize", ErrInvalid, cp.RunID, cp.Seq, name, len(v))
		}
	}
	rec, blobs := encodeCheckpointSums(cp, s.opts.BlobThreshold, s.hasher(cp.RunID, opts.Fence))
	var gen uint64
	err := s.update(ctx, func(txn *badger.Txn) error {
		// Asked again on every attempt: a conflict may come from a Prune
		// that deleted a blob this run had (see knownBlobs).
		var known []bool
		known, gen = s.knownOf(cp.RunID, opts.Fence, blobs)
		if err := fenceTxn(txn, cp.RunID, opts.Fence); err != nil {
			return err
		}
		x, ok, err := readIndex(txn, cp.RunID)
		if err != nil {
			return err
		}
		if err := checkPut(cp, x.latest, ok && cp.Seq <= x.latest); err != nil {
			return err
		}
		for i, b := range blobs {
			if known != nil && known[i] {
				continue // committed for this run before; see knownBlobs
			}
			k := blobKey(cp.RunID, b.sum)
			_, err := txn.Get(k)
			if errors.Is(err, badger.ErrKeyNotFound) {
				err = txn.Set(k, b.data)
			}
			if err != nil {
				return err
			}
		}
		if err := txn.Set(cpKey(cp.RunID, cp.Seq), rec); err != nil {
			return err
		}
		x = runIndex{latest: cp.Seq, stamp: s.nextStamp(), status: cp.Status, time: cp.Time}
		return txn.Set(runPrefix(kindIndex, cp.RunID), encodeIndex(x))
	})
	if errors.Is(err, badger.ErrTxnTooBig) {
		return fmt.Errorf("%w: run %s seq %d: checkpoint too large for one transaction (%v)", ErrInvalid, cp.RunID, cp.Seq, err)
	}
	if err == nil {
		s.rememberBlobs(cp.RunID, opts.Fence, blobs, gen)
	}
	return s.synced(err, opts, walOnly(len(rec), blobs))
}

// walOnly reports whether nothing of a write goes to Badger's value log.
func walOnly(recLen int, blobs []blob) bool {
	if recLen >= valueThreshold {
		return false
	}
	for _, b := range blobs {
		if len(b.data) >= valueThreshold {
			return false
		}
	}
	return true
}

// PutWrites implements Store.
func (s *Badger) PutWrites(ctx context.Context, runID string, seq uint64, writes []Write, opts PutOptions) error {
	for _, w := range writes {
		if len(w.Value) > MaxValueSize {
			return fmt.Errorf("%w: run %s seq %d: write %s/%d is %d bytes, over MaxValueSize", ErrInvalid, runID, seq, w.TaskID, w.Index, len(w.Value))
		}
	}
	err := s.update(ctx, func(txn *badger.Txn) error {
		if err := fenceTxn(txn, runID, opts.Fence); err != nil {
			return err
		}
		if _, err := txn.Get(cpKey(runID, seq)); errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("put writes on run %s seq %d: %w", runID, seq, ErrNotFound)
		} else if err != nil {
			return err
		}
		for _, w := range writes {
			k := writeKey(runID, seq, w)
			_, err := txn.Get(k)
			if errors.Is(err, badger.ErrKeyNotFound) {
				err = txn.Set(k, encodeWrite(w))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	large := false
	for _, w := range writes {
		large = large || len(w.Value) >= valueThreshold-64
	}
	return s.synced(err, opts, !large)
}

// Writes implements Store.
func (s *Badger) Writes(ctx context.Context, runID string, seq uint64) ([]Write, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Write
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: writesPrefix(runID, seq)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			err := it.Item().Value(func(v []byte) error {
				w, err := decodeWrite(runID, seq, v)
				out = append(out, w)
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, compareWrites)
	return out, nil
}

// loadCheckpoint decodes a checkpoint record and resolves its blobs.
func loadCheckpoint(txn *badger.Txn, runID string, seq uint64, rec []byte, cache map[blobRef][]byte) (Checkpoint, error) {
	c, err := decodeCheckpoint(runID, seq, rec)
	if err != nil {
		return Checkpoint{}, err
	}
	for name, ref := range c.refs {
		data, ok := cache[ref]
		if !ok {
			var found bool
			data, found, err = getValue(txn, blobKey(runID, ref))
			if err != nil {
				return Checkpoint{}, err
			}
			if !found {
				return Checkpoint{}, &CorruptError{RunID: runID, Seq: seq, What: "blob",
					Err: fmt.Errorf("value %q refers to missing blob %x", name, ref[:8])}
			}
			if err := checkBlob(runID, seq, name, ref, c.lens[name], data); err != nil {
				return Checkpoint{}, err
			}
			if cache != nil {
				cache[ref] = data
			}
		} else {
			data = cloneBytes(data)
		}
		c.cp.Values[name] = data
	}
	return c.cp, nil
}

func getCheckpoint(txn *badger.Txn, runID string, seq uint64) (Checkpoint, error) {
	rec, ok, err := getValue(txn, cpKey(runID, seq))
	if err != nil {
		return Checkpoint{}, err
	}
	if !ok {
		return Checkpoint{}, fmt.Errorf("get run %s seq %d: %w", runID, seq, ErrNotFound)
	}
	return loadCheckpoint(txn, runID, seq, rec, nil)
}

// Latest implements Store.
func (s *Badger) Latest(ctx context.Context, runID string) (cp Checkpoint, err error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, err
	}
	err = s.view(func(txn *badger.Txn) error {
		x, ok, err := readIndex(txn, runID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("latest of run %s: %w", runID, ErrNotFound)
		}
		cp, err = getCheckpoint(txn, runID, x.latest)
		if errors.Is(err, ErrNotFound) {
			return &CorruptError{RunID: runID, Seq: x.latest, What: "checkpoint", Err: errors.New("the run index names a checkpoint that is missing")}
		}
		return err
	})
	return cp, err
}

// Get implements Store.
func (s *Badger) Get(ctx context.Context, runID string, seq uint64) (cp Checkpoint, err error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, err
	}
	err = s.view(func(txn *badger.Txn) error {
		cp, err = getCheckpoint(txn, runID, seq)
		return err
	})
	return cp, err
}

// List implements Store.
func (s *Badger) List(ctx context.Context, runID string, opts ListOptions) ([]Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := runPrefix(kindCheckpoint, runID)
	start := cpKey(runID, ^uint64(0))
	if opts.Before != 0 {
		start = cpKey(runID, opts.Before-1)
	}
	var out []Checkpoint
	err := s.view(func(txn *badger.Txn) error {
		if opts.Before == 1 {
			return nil
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
		defer it.Close()
		cache := make(map[blobRef][]byte)
		for it.Seek(start); it.Valid(); it.Next() {
			if opts.Limit > 0 && len(out) >= opts.Limit {
				break
			}
			seq, ok := seqAt(it.Item().Key(), len(prefix))
			if !ok {
				return &CorruptError{RunID: runID, What: "checkpoint key", Err: errBadKey}
			}
			rec, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			cp, err := loadCheckpoint(txn, runID, seq, rec, cache)
			if err != nil {
				return err
			}
			out = append(out, cp)
		}
		return nil
	})
	return out, err
}

// Runs implements Store.
func (s *Badger) Runs(ctx context.Context) ([]RunInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type item struct {
		info  RunInfo
		stamp int64
	}
	var items []item
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{kindIndex}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			runID, ok := runOfKey(it.Item().Key())
			if !ok {
				return &CorruptError{What: "run index key", Err: errBadKey}
			}
			err := it.Item().Value(func(v []byte) error {
				x, err := decodeIndex(runID, v)
				items = append(items, item{RunInfo{RunID: runID, Latest: x.latest, Status: x.status, Time: x.time}, x.stamp})
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(b.stamp, a.stamp), cmp.Compare(a.info.RunID, b.info.RunID))
	})
	out := make([]RunInfo, len(items))
	for i, it := range items {
		out[i] = it.info
	}
	return out, nil
}
