package checkpoint

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"
)

// MemoryOption configures a store made by NewMemory.
type MemoryOption func(*Memory)

// MemoryClock sets the clock used for lease expiry and run activity.
func MemoryClock(now func() time.Time) MemoryOption {
	return func(m *Memory) { m.env.Now = now }
}

// MemoryProcessAlive sets the check for whether a lease holder's pid is
// alive on this host (default: kill(pid, 0) != ESRCH).
func MemoryProcessAlive(alive func(pid int) bool) MemoryOption {
	return func(m *Memory) { m.env.Alive = alive }
}

// Memory is a Store kept in process memory. It copies values in and out, so
// callers cannot alias stored data. It is meant for tests and for runs that
// need no durability.
type Memory struct {
	env LeaseRules

	mu     sync.Mutex
	closed bool
	runs   map[string]*memRun
	tokens uint64 // last lease token handed out, store-wide
	stamp  int64  // last activity stamp, to order Runs
}

type memRun struct {
	cps    map[uint64]Checkpoint
	latest uint64
	writes map[uint64]map[memWriteKey]Write
	lease  *Lease
	stamp  int64
}

type memWriteKey struct {
	task  string
	index int
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{runs: make(map[string]*memRun)}
	for _, o := range opts {
		o(m)
	}
	m.env = m.env.WithDefaults()
	return m
}

func (m *Memory) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	return nil
}

func (m *Memory) touch(r *memRun) {
	m.stamp = max(m.stamp+1, m.env.Now().UnixNano())
	r.stamp = m.stamp
}

// Put implements Store.
func (m *Memory) Put(ctx context.Context, cp Checkpoint, opts PutOptions) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	r := m.runs[cp.RunID]
	var latest uint64
	var exists bool
	var lease *Lease
	if r != nil {
		latest, lease = r.latest, r.lease
		_, exists = r.cps[cp.Seq]
	}
	if err := CheckFence(cp.RunID, lease, opts.Fence); err != nil {
		return err
	}
	if exists && IsRetry(cp, opts.Fence, latest, identical(r.cps[cp.Seq], cp)) {
		return nil
	}
	if err := CheckPut(cp, latest, exists); err != nil {
		return err
	}
	if r == nil {
		r = &memRun{cps: make(map[uint64]Checkpoint), writes: make(map[uint64]map[memWriteKey]Write)}
		m.runs[cp.RunID] = r
	}
	r.cps[cp.Seq] = cloneCheckpoint(cp)
	r.latest = cp.Seq
	m.touch(r)
	return nil
}

// PutWrites implements Store.
func (m *Memory) PutWrites(ctx context.Context, runID string, seq uint64, writes []Write, opts PutOptions) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	r := m.runs[runID]
	var lease *Lease
	if r != nil {
		lease = r.lease
	}
	if err := CheckFence(runID, lease, opts.Fence); err != nil {
		return err
	}
	if r == nil || !hasSeq(r, seq) {
		return fmt.Errorf("put writes on run %s seq %d: %w", runID, seq, ErrNotFound)
	}
	ws := r.writes[seq]
	if ws == nil {
		ws = make(map[memWriteKey]Write)
		r.writes[seq] = ws
	}
	for _, w := range writes {
		k := memWriteKey{w.TaskID, w.Index}
		if _, ok := ws[k]; !ok {
			ws[k] = cloneWrite(w)
		}
	}
	return nil
}

// Writes implements Store.
func (m *Memory) Writes(ctx context.Context, runID string, seq uint64) ([]Write, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	r := m.runs[runID]
	if r == nil {
		return nil, nil
	}
	out := make([]Write, 0, len(r.writes[seq]))
	for _, w := range r.writes[seq] {
		out = append(out, cloneWrite(w))
	}
	slices.SortFunc(out, compareWrites)
	return out, nil
}

func compareWrites(a, b Write) int {
	return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Index, b.Index))
}

// Latest implements Store.
func (m *Memory) Latest(ctx context.Context, runID string) (Checkpoint, error) {
	if err := m.lock(ctx); err != nil {
		return Checkpoint{}, err
	}
	defer m.mu.Unlock()
	r := m.runs[runID]
	if r == nil || r.latest == 0 {
		return Checkpoint{}, fmt.Errorf("latest of run %s: %w", runID, ErrNotFound)
	}
	return cloneCheckpoint(r.cps[r.latest]), nil
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, runID string, seq uint64) (Checkpoint, error) {
	if err := m.lock(ctx); err != nil {
		return Checkpoint{}, err
	}
	defer m.mu.Unlock()
	if r := m.runs[runID]; r != nil {
		if cp, ok := r.cps[seq]; ok {
			return cloneCheckpoint(cp), nil
		}
	}
	return Checkpoint{}, fmt.Errorf("get run %s seq %d: %w", runID, seq, ErrNotFound)
}

// List implements Store.
func (m *Memory) List(ctx context.Context, runID string, opts ListOptions) ([]Checkpoint, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	r := m.runs[runID]
	if r == nil {
		return nil, nil
	}
	seqs := make([]uint64, 0, len(r.cps))
	for s := range r.cps {
		if opts.Before == 0 || s < opts.Before {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	slices.Reverse(seqs)
	if opts.Limit > 0 && len(seqs) > opts.Limit {
		seqs = seqs[:opts.Limit]
	}
	out := make([]Checkpoint, len(seqs))
	for i, s := range seqs {
		out[i] = cloneCheckpoint(r.cps[s])
	}
	return out, nil
}

// Runs implements Store.
func (m *Memory) Runs(ctx context.Context) ([]RunInfo, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	type item struct {
		info  RunInfo
		stamp int64
	}
	items := make([]item, 0, len(m.runs))
	for id, r := range m.runs {
		if r.latest == 0 {
			continue // only a lease so far
		}
		cp := r.cps[r.latest]
		items = append(items, item{RunInfo{RunID: id, Latest: r.latest, Status: cp.Status, Time: cp.Time, Summary: cloneBytes(cp.Summary)}, r.stamp})
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

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, runID string) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	delete(m.runs, runID)
	return nil
}

// Prune implements Store.
func (m *Memory) Prune(ctx context.Context, runID string, keep int) error {
	if keep < 1 {
		return fmt.Errorf("%w: prune run %s keeping %d checkpoints (must keep at least 1)", ErrInvalid, runID, keep)
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	r := m.runs[runID]
	if r == nil {
		return nil
	}
	seqs := make([]uint64, 0, len(r.cps))
	for s := range r.cps {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	if len(seqs) <= keep {
		return nil
	}
	for _, s := range seqs[:len(seqs)-keep] {
		delete(r.cps, s)
		delete(r.writes, s)
	}
	return nil
}

// Acquire implements Store.
func (m *Memory) Acquire(ctx context.Context, runID string, owner Owner, ttl time.Duration) (Lease, error) {
	if err := m.lock(ctx); err != nil {
		return Lease{}, err
	}
	defer m.mu.Unlock()
	r := m.runs[runID]
	var cur *Lease
	if r != nil {
		cur = r.lease
	}
	l, err := m.env.Acquire(runID, cur, owner, ttl, m.tokens+1)
	if err != nil {
		return Lease{}, err
	}
	if l.Token > m.tokens {
		m.tokens = l.Token
	}
	if r == nil {
		// A lease may be taken before the first checkpoint; the run has no
		// checkpoints yet, so it is not listed by Runs.
		r = &memRun{cps: make(map[uint64]Checkpoint), writes: make(map[uint64]map[memWriteKey]Write)}
		m.runs[runID] = r
	}
	r.lease = &l
	return l, nil
}

// Renew implements Store.
func (m *Memory) Renew(ctx context.Context, lease Lease, ttl time.Duration) (Lease, error) {
	if err := m.lock(ctx); err != nil {
		return Lease{}, err
	}
	defer m.mu.Unlock()
	var cur *Lease
	if r := m.runs[lease.RunID]; r != nil {
		cur = r.lease
	}
	l, err := m.env.Renew(cur, lease, ttl)
	if err != nil {
		return Lease{}, err
	}
	m.runs[lease.RunID].lease = &l
	return l, nil
}

// Release implements Store.
func (m *Memory) Release(ctx context.Context, lease Lease) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if r := m.runs[lease.RunID]; r != nil && r.lease != nil && r.lease.Token == lease.Token && r.lease.Owner.ID == lease.Owner.ID {
		r.lease = nil
	}
	return nil
}

// Close implements Store. Later calls fail with ErrClosed.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.runs = nil
	return nil
}

// identical reports whether stored (a copy made by cloneCheckpoint) and cp
// are the same record: times compared as instants, nil and empty distinct.
func identical(stored, cp Checkpoint) bool {
	if !stored.Time.Equal(cp.Time) {
		return false
	}
	stored.Time, cp.Time = time.Time{}, time.Time{}
	return reflect.DeepEqual(stored, cp)
}

func hasSeq(r *memRun, seq uint64) bool {
	_, ok := r.cps[seq]
	return ok
}
