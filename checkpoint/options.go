package checkpoint

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

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

// leaseEnv is the clock and process check leases use; both are injectable
// so tests are deterministic.
type leaseEnv struct {
	now   func() time.Time
	alive func(pid int) bool
}

func (e leaseEnv) withDefaults() leaseEnv {
	if e.now == nil {
		e.now = time.Now
	}
	if e.alive == nil {
		e.alive = processAlive
	}
	return e
}

// decideAcquire is the pure lease decision shared by every store: given the
// current lease (nil when none), it returns the lease to store or an error.
// next is the token to use if the lease changes hands.
func (e leaseEnv) decideAcquire(runID string, cur *Lease, owner Owner, ttl time.Duration, next uint64) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: lease ttl %v must be positive", ErrInvalid, ttl)
	}
	if owner.ID == "" {
		return Lease{}, fmt.Errorf("%w: lease owner has no ID", ErrInvalid)
	}
	now := e.now()
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
	case cur.Owner.Host != "" && cur.Owner.Host == owner.Host && !e.alive(cur.Owner.PID):
		return l, nil // holder on this host is dead
	}
	return Lease{}, &LeaseHeldError{RunID: runID, Holder: cur.Owner}
}

// decideRenew checks that held is still the run's lease and extends it.
func (e leaseEnv) decideRenew(cur *Lease, held Lease, ttl time.Duration) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: lease ttl %v must be positive", ErrInvalid, ttl)
	}
	if cur == nil || cur.Token != held.Token || cur.Owner.ID != held.Owner.ID {
		return Lease{}, fmt.Errorf("renew lease of run %s: %w", held.RunID, ErrFenced)
	}
	l := *cur
	l.Expires = e.now().Add(ttl).Round(0)
	return l, nil
}
