package profile

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Run is a run prepared to start (host.Prepared), resolved once and
// handed down: its spec with its run id, the profile resolved, the plan
// read and the inputs checked (Setup.Preflight, Setup.Prepare), then the
// work tree checked once, before the store opens (Precheck) or as the
// host begins the run (Begin). Nothing stands between the calls but this
// value.
type Run struct {
	o      request
	getenv func(string) string // the keys' environment (KeyVault)

	mu   sync.Mutex
	lock *workspace.WorkTreeLock // the checkout's, held since its check (a run in place)
	tree *treeCheck              // the work tree's check, once made
}

var _ host.Prepared = (*Run)(nil)

// treeCheck is what the check of the work tree found (checkTree).
type treeCheck struct {
	inputs      []string // the run's own files untracked in the tree
	uncommitted []string // tracked files with uncommitted changes
}

// Spec is the run's spec, with its run id.
func (r *Run) Spec() host.RunSpec { return r.o.RunSpec }

// Precheck checks the work tree of the repository in repoDir before a
// store is opened, so that a run refused for its work tree creates no
// store: a run in place checks it only while it can take the tree's
// lock, which it then keeps for the host (TakeLock; Release gives it up
// when no host took it): a tree another process works in is that
// process's to change, and the host names the holder. Whatever it cannot
// open is left to the host to report. The check is not made again when
// the host begins the run.
func (r *Run) Precheck(ctx context.Context, repoDir string) error {
	repo, err := workspace.Open(repoDir)
	if err != nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.o.InPlace {
		return r.checkLocked(ctx, repo)
	}
	l, err := repo.LockWorkTree(r.o.RunID)
	if err != nil {
		return nil
	}
	if err := r.checkLocked(ctx, repo); err != nil {
		l.Unlock()
		return err
	}
	r.lock = l
	return nil
}

// checkLocked checks repo's work tree (checkTree) unless it was checked.
func (r *Run) checkLocked(ctx context.Context, repo *workspace.Repo) error {
	if r.tree != nil {
		return nil
	}
	inputs, uncommitted, err := checkTree(ctx, repo, r.o)
	if err != nil {
		return err
	}
	r.tree = &treeCheck{inputs: inputs, uncommitted: uncommitted}
	return nil
}

// TakeLock hands over the checkout's lock Precheck took, nil when it
// holds none.
func (r *Run) TakeLock() *workspace.WorkTreeLock {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lock
	r.lock = nil
	return l
}

// Release gives up the checkout's lock when no host took it (the store
// would not open); it does nothing otherwise.
func (r *Run) Release() {
	if l := r.TakeLock(); l != nil {
		l.Unlock()
	}
}

// Begin checks repo's work tree unless Precheck did (host.Prepared) and
// builds the run's first state; it returns too the tracked files with
// uncommitted changes the check found.
func (r *Run) Begin(ctx context.Context, repo *workspace.Repo) (state.ExecutionState, []string, error) {
	var zero state.ExecutionState
	r.mu.Lock()
	err := r.checkLocked(ctx, repo)
	tree := r.tree
	r.mu.Unlock()
	if err != nil {
		return zero, nil, err
	}
	o := r.o
	rp := *o.profile
	var md string
	if o.PlanFile != "" {
		b, err := o.planSource()
		if err != nil {
			return zero, nil, err
		}
		md = string(b)
	}
	script := o.Script
	if script != "" {
		abs, err := filepath.Abs(script)
		if err != nil {
			return zero, nil, fmt.Errorf("script path: %w", err)
		}
		script = abs
	}
	planPath := ""
	if o.PlanFile != "" {
		planPath, _ = filepath.Abs(o.PlanFile)
	}
	goal := o.Goal
	if goal == "" {
		goal = PlanTitle(md, o.PlanFile)
	}
	s, err := state.NewRun(state.RunInfo{ID: o.RunID, Goal: goal, TrackerID: o.TrackerID, CreatedAt: time.Now()},
		state.RunConfig{
			Profile: rp.name, Agents: rp.agents, Drivers: rp.drivers, Limits: rp.limits, SkipTDDCheck: rp.skipTDD, Recovery: rp.recovery, Notify: rp.notify,
			Mode: rp.mode, StrictFiles: rp.strict,
			ScriptPath: script, PlanPath: planPath, Inputs: tree.inputs, AutoApprove: o.AutoApprove, AllowDirty: o.AllowDirty, Pace: o.Pace,
			Parallel: cmp.Or(o.Parallel, rp.parallel),
		})
	if err != nil {
		return zero, nil, errorf(host.Usage, "%w", err)
	}
	s.Plan.Markdown = md
	return s, tree.uncommitted, nil
}
