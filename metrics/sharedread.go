package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// sharedRead reads, at scrape time, figures that other processes change
// too (a database store's runs, or its queue): scrapes less than
// probeEvery apart share one read, a read waits at most timeout, and a
// read that fails fails no scrape: the figures stay as they were, and log
// gets one warning until a read answers again.
type sharedRead[T any] struct {
	now     func() time.Time
	timeout time.Duration // ProbeTimeout

	mu              sync.Mutex                       // held across a read, so that concurrent scrapes make one
	read            func(context.Context) (T, error) // nil: nothing is read
	log             *slog.Logger
	warn, recovered string    // the log's lines when reads fail, and answer again
	last            time.Time // when the last read started
	failing         bool      // the last read failed, and the log said so
}

func newSharedRead[T any](warn, recovered string) sharedRead[T] {
	return sharedRead[T]{now: time.Now, timeout: ProbeTimeout, warn: warn, recovered: recovered}
}

// setRead replaces the read (nil stops reading) and its log (nil discards
// it), and forgets the last read.
func (s *sharedRead[T]) setRead(read func(context.Context) (T, error), log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read, s.log, s.last, s.failing = read, log, time.Time{}, false
}

// refresh reads, unless the last read is less than probeEvery old, and
// hands what it read to apply; a read that fails is not applied. It
// reports whether there is a read at all.
func (s *sharedRead[T]) refresh(apply func(T)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read == nil {
		return false
	}
	now := s.now()
	if !s.last.IsZero() && now.Sub(s.last) < probeEvery && !now.Before(s.last) {
		return true
	}
	s.last = now
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	v, err := s.read(ctx)
	if err != nil {
		if !s.failing {
			s.failing = true
			s.log.Warn(s.warn, "err", err)
		}
		return true
	}
	if s.failing {
		s.failing = false
		s.log.Info(s.recovered)
	}
	apply(v)
	return true
}
