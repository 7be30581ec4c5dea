package badger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/checkpoint"
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

func readLease(txn *badger.Txn, runID string) (*checkpoint.Lease, error) {
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
	return checkpoint.CheckFence(runID, l, fence)
}

// synced makes a committed write durable when opts.Sync asks for it. It
// shares the flush with the writes of other goroutines committed meanwhile
// (see groupSync). walOnly says the write put nothing in Badger's value log
// (no value over 64 KiB), so flushing the write-ahead log is enough.
func (s *Store) synced(err error, opts checkpoint.PutOptions, walOnly bool) error {
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
func (s *Store) flushStore(full bool) error {
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
func (s *Store) syncWAL() error {
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

func (s *Store) walSeen(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wals[name]
}

func (s *Store) markWALSeen(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wals == nil {
		s.wals = make(map[string]bool)
	}
	for _, n := range names {
		s.wals[n] = true
	}
}

// Put implements checkpoint.Store.
func (s *Store) Put(ctx context.Context, cp checkpoint.Checkpoint, opts checkpoint.PutOptions) error {
	for name, v := range cp.Values {
		if len(v) > MaxValueSize {
			return fmt.Errorf("%w: run %s seq %d: value %q is %d bytes, over MaxValueSize", checkpoint.ErrInvalid, cp.RunID, cp.Seq, name, len(v))
		}
	}
	if err := s.loadStamp(); err != nil {
		return err
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
		exists := ok && cp.Seq <= x.latest
		if exists && opts.Fence != 0 && cp.Seq == x.latest {
			stored, _, err := getValue(txn, cpKey(cp.RunID, cp.Seq))
			if err != nil {
				return err
			}
			if checkpoint.IsRetry(cp, opts.Fence, x.latest, bytes.Equal(stored, rec)) {
				return nil // the record is there already: write nothing
			}
		}
		if err := checkpoint.CheckPut(cp, x.latest, exists); err != nil {
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
		// The summary has a key of its own, not a field of the index
		// record: stores written before summaries existed read as they
		// were, and older gaffers read this one.
		if err := putSummary(txn, cp, ok); err != nil {
			return err
		}
		x = runIndex{latest: cp.Seq, stamp: s.nextStamp(), status: cp.Status, time: cp.Time}
		return txn.Set(runPrefix(kindIndex, cp.RunID), encodeIndex(x))
	})
	if errors.Is(err, badger.ErrTxnTooBig) {
		return fmt.Errorf("%w: run %s seq %d: checkpoint too large for one transaction (%v)", checkpoint.ErrInvalid, cp.RunID, cp.Seq, err)
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

// PutWrites implements checkpoint.Store.
func (s *Store) PutWrites(ctx context.Context, runID string, seq uint64, writes []checkpoint.Write, opts checkpoint.PutOptions) error {
	for _, w := range writes {
		if len(w.Value) > MaxValueSize {
			return fmt.Errorf("%w: run %s seq %d: write %s/%d is %d bytes, over MaxValueSize", checkpoint.ErrInvalid, runID, seq, w.TaskID, w.Index, len(w.Value))
		}
	}
	err := s.update(ctx, func(txn *badger.Txn) error {
		if err := fenceTxn(txn, runID, opts.Fence); err != nil {
			return err
		}
		if _, err := txn.Get(cpKey(runID, seq)); errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("put writes on run %s seq %d: %w", runID, seq, checkpoint.ErrNotFound)
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

// Writes implements checkpoint.Store.
func (s *Store) Writes(ctx context.Context, runID string, seq uint64) ([]checkpoint.Write, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []checkpoint.Write
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
func loadCheckpoint(txn *badger.Txn, runID string, seq uint64, rec []byte, cache map[blobRef][]byte) (checkpoint.Checkpoint, error) {
	c, err := decodeCheckpoint(runID, seq, rec)
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	for name, ref := range c.refs {
		data, ok := cache[ref]
		if !ok {
			var found bool
			data, found, err = getValue(txn, blobKey(runID, ref))
			if err != nil {
				return checkpoint.Checkpoint{}, err
			}
			if !found {
				return checkpoint.Checkpoint{}, &checkpoint.CorruptError{RunID: runID, Seq: seq, What: "blob",
					Err: fmt.Errorf("value %q refers to missing blob %x", name, ref[:8])}
			}
			if err := checkBlob(runID, seq, name, ref, c.lens[name], data); err != nil {
				return checkpoint.Checkpoint{}, err
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

func getCheckpoint(txn *badger.Txn, runID string, seq uint64) (checkpoint.Checkpoint, error) {
	rec, ok, err := getValue(txn, cpKey(runID, seq))
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	if !ok {
		return checkpoint.Checkpoint{}, fmt.Errorf("get run %s seq %d: %w", runID, seq, checkpoint.ErrNotFound)
	}
	return loadCheckpoint(txn, runID, seq, rec, nil)
}

// Latest implements checkpoint.Store.
func (s *Store) Latest(ctx context.Context, runID string) (cp checkpoint.Checkpoint, err error) {
	if err := ctx.Err(); err != nil {
		return checkpoint.Checkpoint{}, err
	}
	err = s.view(func(txn *badger.Txn) error {
		x, ok, err := readIndex(txn, runID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("latest of run %s: %w", runID, checkpoint.ErrNotFound)
		}
		cp, err = getCheckpoint(txn, runID, x.latest)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return &checkpoint.CorruptError{RunID: runID, Seq: x.latest, What: "checkpoint", Err: errors.New("the run index names a checkpoint that is missing")}
		}
		return err
	})
	return cp, err
}

// Get implements checkpoint.Store.
func (s *Store) Get(ctx context.Context, runID string, seq uint64) (cp checkpoint.Checkpoint, err error) {
	if err := ctx.Err(); err != nil {
		return checkpoint.Checkpoint{}, err
	}
	err = s.view(func(txn *badger.Txn) error {
		cp, err = getCheckpoint(txn, runID, seq)
		return err
	})
	return cp, err
}

// List implements checkpoint.Store.
func (s *Store) List(ctx context.Context, runID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := runPrefix(kindCheckpoint, runID)
	start := cpKey(runID, ^uint64(0))
	if opts.Before != 0 {
		start = cpKey(runID, opts.Before-1)
	}
	var out []checkpoint.Checkpoint
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
				return &checkpoint.CorruptError{RunID: runID, What: "checkpoint key", Err: errBadKey}
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

// Runs implements checkpoint.Store.
func (s *Store) Runs(ctx context.Context) ([]checkpoint.RunInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The runs are kept in chunks as they are read, and copied once, in
	// their order, into the answer: a list of 10,000 grown by appends
	// copied itself over and over, into fresh memory each time.
	var (
		infos  chunks[checkpoint.RunInfo]
		stamps []int64
	)
	err := s.view(func(txn *badger.Txn) error {
		// The summaries are read beside the index, on another core: most
		// of a listing's bytes are theirs.
		var sums chunks[runSummary]
		serr := make(chan error, 1)
		go func() {
			err := s.guard(func() (err error) {
				sums, err = summaries(txn)
				return err
			})
			serr <- err
		}()
		err := func() error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{kindIndex}})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				runID, ok := runOfKey(it.Item().Key())
				if !ok {
					return &checkpoint.CorruptError{What: "run index key", Err: errBadKey}
				}
				err := it.Item().Value(func(v []byte) error {
					x, err := decodeIndex(runID, v)
					*infos.add() = checkpoint.RunInfo{RunID: runID, Latest: x.latest, Status: x.status, Time: x.time}
					stamps = append(stamps, x.stamp)
					return err
				})
				if err != nil {
					return err
				}
			}
			return nil
		}()
		if err := cmp.Or(<-serr, err); err != nil {
			return err
		}
		// Both kinds of key end in the same run part, in the same order:
		// a run's summary, if it has one, is the next.
		j := 0
		for i := range infos.n {
			info := infos.at(i)
			for j < sums.n && runKeyLess(sums.at(j).runID, info.RunID) {
				j++
			}
			if j < sums.n && sums.at(j).runID == info.RunID {
				info.Summary = sums.at(j).summary
				j++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	order := make([]int32, infos.n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(stamps[b], stamps[a]), cmp.Compare(infos.at(int(a)).RunID, infos.at(int(b)).RunID))
	})
	out := make([]checkpoint.RunInfo, infos.n)
	for i, k := range order {
		out[i] = *infos.at(int(k))
	}
	return out, nil
}

// firstChunk is how many entries the first chunk of a chunks holds;
// each next one holds twice as many as the one before.
const firstChunk = 32

// chunks is a list grown a chunk at a time, so that nothing already in
// it is copied as it grows: chunk k holds firstChunk<<k entries.
type chunks[T any] struct {
	cs [][]T
	n  int
}

// add appends a zero entry and returns it.
func (c *chunks[T]) add() *T {
	k, i := chunkOf(c.n)
	if k == len(c.cs) {
		c.cs = append(c.cs, make([]T, firstChunk<<k))
	}
	c.n++
	return &c.cs[k][i]
}

// at returns entry i, which must be below c.n.
func (c *chunks[T]) at(i int) *T {
	k, j := chunkOf(i)
	return &c.cs[k][j]
}

// chunkOf is the chunk of entry i of a chunks, and its place there.
func chunkOf(i int) (k, j int) {
	k = bits.Len(uint(i/firstChunk+1)) - 1
	return k, i - firstChunk*(1<<k-1)
}

// runKeyLess orders run ids as their keys are ordered: by the bytes of
// their length's uvarint, then by their own (see runPrefix).
func runKeyLess(a, b string) bool {
	var la, lb [binary.MaxVarintLen64]byte
	na := binary.PutUvarint(la[:], uint64(len(a)))
	nb := binary.PutUvarint(lb[:], uint64(len(b)))
	if c := bytes.Compare(la[:na], lb[:nb]); c != 0 {
		return c < 0
	}
	return a < b
}

// putSummary keeps cp's summary as its run's; an earlier checkpoint's
// goes when cp has none (hadRun: the run has a checkpoint already).
func putSummary(txn *badger.Txn, cp checkpoint.Checkpoint, hadRun bool) error {
	key := runPrefix(kindSummary, cp.RunID)
	if cp.Summary != nil {
		return txn.Set(key, cloneBytes(cp.Summary))
	}
	if !hadRun {
		return nil
	}
	_, err := txn.Get(key)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		return nil // no tombstone for a key that is not there
	case err != nil:
		return err
	}
	return txn.Delete(key)
}

// runSummary is one run's summary as summaries reads it.
type runSummary struct {
	runID   string
	summary []byte
}

// summaries reads every run's summary in one pass over their keys, in
// key order, into buffers of many.
func summaries(txn *badger.Txn) (chunks[runSummary], error) {
	var out chunks[runSummary]
	var buf []byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{kindSummary}})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		runID, ok := runOfKey(it.Item().Key())
		if !ok {
			return out, &checkpoint.CorruptError{What: "run summary key", Err: errBadKey}
		}
		err := it.Item().Value(func(v []byte) error {
			if len(buf)+len(v) > cap(buf) {
				buf = make([]byte, 0, max(64<<10, len(v)))
			}
			start := len(buf)
			buf = append(buf, v...)
			*out.add() = runSummary{runID: runID, summary: buf[start:len(buf):len(buf)]}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func compareWrites(a, b checkpoint.Write) int {
	return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Index, b.Index))
}

// cloneBytes copies b, keeping nil and empty distinct.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
