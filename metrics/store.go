package metrics

import (
	"context"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Store wraps a checkpoint.Store and records the latency of every checkpoint
// write (Put) in gaffer_checkpoint_write_seconds. The runtime's
// CheckpointSaved events carry the size; the write latency is measured here,
// around the store call, fsync included.
type Store struct {
	checkpoint.Store
	m   *Metrics
	now func() time.Time
}

var _ checkpoint.Store = (*Store)(nil)

// InstrumentStore returns s wrapped so that its writes are timed into m.
func InstrumentStore(s checkpoint.Store, m *Metrics) *Store {
	return &Store{Store: s, m: m, now: time.Now}
}

// Put writes cp through the wrapped store and records how long it took.
func (s *Store) Put(ctx context.Context, cp checkpoint.Checkpoint, opts checkpoint.PutOptions) error {
	start := s.now()
	err := s.Store.Put(ctx, cp, opts)
	if err == nil {
		s.m.ObserveCheckpointWrite(s.now().Sub(start))
	}
	return err
}

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() checkpoint.Store { return s.Store }
