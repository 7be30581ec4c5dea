package cli

import (
	"errors"

	"github.com/gaffer-dev/gaffer/workspace"
)

// lockWorkTree takes the work tree's lock (workspace.LockWorkTree) for a
// process about to execute runID's phases, unless this env holds it
// already, and returns what releases it. Another process holding it is
// ExitLocked, naming its pid, host and run; so is this env executing
// another run. The lock is independent of
// the store: two processes with different --store never work on one
// tree at once. It is released when the env stops executing (drive
// returns), and dies with the process.
func (e *env) lockWorkTree(runID string) (func(), error) {
	var held *workspace.WorkTreeHeldError
	if e.wt != nil {
		if h := e.wt.Holder(); h.Run != runID { // this process executes another run there
			return nil, exitf(ExitLocked, "work tree %s is in use by %s; wait for it to finish or stop it", e.repo.Root(), h)
		}
		return func() {}, nil
	}
	l, err := e.repo.LockWorkTree(runID)
	if errors.As(err, &held) {
		return nil, exitf(ExitLocked, "work tree %s is in use by %s; wait for it to finish or stop it", held.Root, held.Holder)
	}
	if err != nil {
		return nil, exitf(ExitFailure, "lock the work tree: %w", err)
	}
	e.wt = l
	return func() { e.wt = nil; l.Unlock() }, nil
}
