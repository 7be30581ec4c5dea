package checkpoint

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// The rules in this file are the ones every Store applies the same way:
// the ordering of Put, fencing, and who gets a lease. They are exported for
// Store implementations outside this package (checkpoint/badger); callers
// of a Store do not need them.

// CheckPut applies the ordering rules every store shares to a Put of cp,
// given the run's latest Seq (0 when the run has none) and whether cp.Seq
// is already stored. It returns an error matching ErrConflict or ErrInvalid.
func CheckPut(cp Checkpoint, latest uint64, exists bool) error {
	if cp.RunID == "" {
		return fmt.Errorf("%w: checkpoint has no run id", ErrInvalid)
	}
	if exists {
		return fmt.Errorf("put run %s seq %d: seq exists: %w", cp.RunID, cp.Seq, ErrConflict)
	}
	if cp.Parent != latest {
		return fmt.Errorf("put run %s seq %d: parent %d is not the latest seq %d: %w", cp.RunID, cp.Seq, cp.Parent, latest, ErrConflict)
	}
	if cp.Seq != cp.Parent+1 {
		return fmt.Errorf("%w: run %s seq %d does not follow parent %d", ErrInvalid, cp.RunID, cp.Seq, cp.Parent)
	}
	return nil
}

// IsRetry reports whether a Put of cp that found cp.Seq taken is the retry
// of a Put that succeeded but whose answer was lost (an ambiguous commit):
// the write is fenced (fence is non-zero and CheckFence passed it), cp.Seq
// is the run's latest, and the record stored there is identical to cp
// (same). Such a Put succeeds without writing anything; any other Put of a
// taken Seq is a conflict. Without a fence a store cannot tell the writer's
// own record from another writer's, so an unfenced Put never counts as a
// retry.
func IsRetry(cp Checkpoint, fence, latest uint64, same bool) bool {
	return fence != 0 && cp.Seq == latest && cp.Seq == cp.Parent+1 && same
}

// CheckFence checks a write's fencing token (PutOptions.Fence) against the
// run's current lease (nil when none). A zero fence is not checked;
// otherwise the error matches ErrFenced unless the lease carries the token.
func CheckFence(runID string, lease *Lease, fence uint64) error {
	if fence == 0 {
		return nil
	}
	if lease == nil || lease.Token != fence {
		return fmt.Errorf("write to run %s with token %d: %w", runID, fence, ErrFenced)
	}
	return nil
}

// processAlive reports whether a process with this pid is alive on this
// host. A pid we may not signal (EPERM) exists; ESRCH means it is gone, and
// so does a zombie: a killed process whose parent has not reaped it yet has
// released its files but still answers kill(pid, 0), and a user resuming
// right after a kill -9 must not wait for the lease to expire.
func processAlive(pid int) bool {
	if pid <= 0 {
		return true // unknown pid: cannot prove it dead
	}
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	return !exited(pid)
}

// LeaseRules is the pure lease decision shared by every store, with the
// clock and process check it uses; both are injectable so tests are
// deterministic.
type LeaseRules struct {
	// Now is the clock for lease expiry (nil: time.Now).
	Now func() time.Time
	// Alive reports whether a pid on this host is alive (nil: kill(pid, 0)
	// does not fail with ESRCH and the process is not a zombie).
	Alive func(pid int) bool
}

// WithDefaults returns r with nil fields set to their defaults.
func (r LeaseRules) WithDefaults() LeaseRules {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Alive == nil {
		r.Alive = processAlive
	}
	return r
}

// Acquire decides a Store.Acquire: given the run's current lease (nil when
// none), it returns the lease to store or an error (a *LeaseHeldError, or
// one matching ErrInvalid). next is the token to use if the lease changes
// hands. Call it on rules returned by WithDefaults.
func (r LeaseRules) Acquire(runID string, cur *Lease, owner Owner, ttl time.Duration, next uint64) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: lease ttl %v must be positive", ErrInvalid, ttl)
	}
	if owner.ID == "" {
		return Lease{}, fmt.Errorf("%w: lease owner has no ID", ErrInvalid)
	}
	now := r.Now()
	l := Lease{RunID: runID, Owner: owner, Token: next, Expires: now.Add(ttl).Round(0)}
	if cur == nil {
		return l, nil
	}
	switch {
	case cur.Owner.ID == owner.ID:
		l.Token = cur.Token // renewal keeps the token
		return l, nil
	case !now.Before(cur.Expires):
		return l, nil // expired
	case cur.Owner.Host != "" && cur.Owner.Host == owner.Host && !r.Alive(cur.Owner.PID):
		return l, nil // holder on this host is dead
	}
	return Lease{}, &LeaseHeldError{RunID: runID, Holder: cur.Owner}
}

// Renew decides a Store.Renew: it checks that held is still the run's
// lease cur (nil when none) and extends it, or fails with ErrFenced. Call
// it on rules returned by WithDefaults.
func (r LeaseRules) Renew(cur *Lease, held Lease, ttl time.Duration) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: lease ttl %v must be positive", ErrInvalid, ttl)
	}
	if cur == nil || cur.Token != held.Token || cur.Owner.ID != held.Owner.ID {
		return Lease{}, fmt.Errorf("renew lease of run %s: %w", held.RunID, ErrFenced)
	}
	l := *cur
	l.Expires = r.Now().Add(ttl).Round(0)
	return l, nil
}
