package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// ForkBranchPrefix names a fork's branch: gaffer/<run-id>.
const ForkBranchPrefix = "gaffer/"

// Fork copies checkpoint seq of runID into a new run of its own: its own
// id (its commits carry it), its own creation time and execution
// directory, and its own branch, gaffer/<new-id>, checked out at the
// commit the checkpoint stood on — the pre-phase commit of a phase that
// was under way (that phase runs again from a fresh session: its
// uncommitted work was never kept), the commit of a phase just finished,
// or the commit the parent run started from. The user's untracked and
// ignored files stay; changes to tracked files refuse the fork (exit 8),
// since the checkout would overwrite them. The new run is not started:
// `gaffer resume NEW` (or approve) continues it, on its branch.
func Fork(ctx context.Context, e *env, runID string, seq uint64) error {
	id := newRunID(time.Now())
	st, err := e.repo.Status(ctx)
	if err != nil {
		return exitf(ExitPrecondition, "read the work tree's status: %w", err)
	}
	if paths := dirtPaths(workspace.Status{Modified: st.Modified, Added: st.Added, Deleted: st.Deleted}, nil); len(paths) > 0 {
		return exitf(ExitPrecondition, "%w (%s: %s) in %s; the fork checks out its own branch: commit or stash them first",
			ErrDirtyTree, plural(len(paths), "path"), listPaths(paths, 10), e.repo.Root())
	}
	unlock, err := e.lockWorkTree(id)
	if err != nil {
		return err
	}
	defer unlock()
	parent, err := e.runner.History(ctx, runID, 1)
	if err != nil {
		return e.runError(ctx, runID, err)
	}
	snap, err := e.runner.Fork(ctx, runID, seq, id)
	if err != nil {
		return e.runError(ctx, runID, err)
	}
	s, as := forkState(snap, id, time.Now())
	base := forkBase(s)
	if base == "" && len(parent) > 0 && len(parent[0].State.Progress.Phases) > 0 {
		base = parent[0].State.Progress.Phases[0].PreCommit // where the parent started
	}
	if base == "" {
		if base, err = e.repo.Head(ctx); err != nil {
			return exitf(ExitPrecondition, "fork: %w", err)
		}
	}
	untracked, err := e.repo.Untracked(ctx)
	if err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	branch := ForkBranchPrefix + id
	if err := e.repo.CheckoutNewBranch(ctx, branch, base, untracked); err != nil {
		if errors.Is(err, workspace.ErrResetConflict) {
			return exitf(ExitPrecondition, "fork: check out %s at %s: %w", branch, short(base), err)
		}
		return fmt.Errorf("fork: check out %s at %s: %w", branch, short(base), err)
	}
	if err := copyExecDir(e.repo.Root(), snap.State.Run.ExecDir, s.Run.ExecDir); err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	if untracked, err = e.repo.Untracked(ctx); err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	if s, err = keepUntracked(s, untracked); err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	if _, err := e.runner.UpdateState(ctx, id, s, as); err != nil {
		return fmt.Errorf("fork: set the new run id: %w", err)
	}
	fmt.Fprintf(e.io.Out, "Forked %s at checkpoint %d as %s, on branch %s at %s.\nContinue it with: %s\n",
		runID, seq, id, branch, short(base), e.cmd("resume", id))
	return nil
}

// forkState is the new run's first state, from the forked checkpoint, and
// the node it is written as.
func forkState(snap graph.Snapshot[state.ExecutionState], id string, now time.Time) (state.ExecutionState, string) {
	s := snap.State.Clone()
	s.Run.ID = id
	s.Run.CreatedAt = now.UTC()
	track := s.Run.TrackerID
	if track == "" {
		track = state.RunSuffix(id)
	} else {
		track += "-" + state.RunSuffix(id)
	}
	s.Run.ExecDir = state.ExecDir(s.Run.CreatedAt.Format(time.DateOnly), track, s.Run.Slug)
	// The user's changes put aside by --allow-dirty belong to the run that
	// put them aside: it alone puts them back, once.
	s.Stash = state.UserStash{}
	as := graph.START
	if len(snap.Ran) > 0 {
		as = snap.Ran[len(snap.Ran)-1]
	}
	// A phase under way runs again from a fresh session at its pre-phase
	// commit: its uncommitted work was in the parent's work tree only.
	if i := s.Progress.CurrentPhase; i >= 0 && i < len(s.Progress.Phases) && s.Progress.Phases[i].Status == state.PhaseRunning &&
		s.Approval.Decision == state.DecisionApproved && as != nodes.NodeApproval && as != nodes.NodeNextTask {
		s.Progress.DriverSessionID = ""
		as = nodes.NodeApproval // routes an approved run to phased_execution
	}
	// A checkpoint waiting for approval has run no node of its own; from
	// START the plan is validated again and approval asked again.
	return s, as
}

// keepUntracked makes the untracked files of the fork's tree (but its own
// execution directory) the user's files of a phase under way, which runs
// again: the parent's snapshot of them was of the parent's tree, and the
// fresh session's reset to the pre-phase commit removes every untracked
// file outside the snapshot. A phase not yet prepared takes its own.
func keepUntracked(s state.ExecutionState, untracked []string) (state.ExecutionState, error) {
	i := s.Progress.CurrentPhase
	if i < 0 || i >= len(s.Progress.Phases) || s.Progress.Phases[i].Status != state.PhaseRunning {
		return s, nil
	}
	ps, err := s.PhaseState(i)
	if err != nil {
		return s, err
	}
	ps.Untracked = nil
	dir := strings.TrimSuffix(s.Run.ExecDir, "/")
	for _, p := range untracked {
		if q := strings.TrimSuffix(p, "/"); q != dir && !strings.HasPrefix(q, dir+"/") && !strings.HasPrefix(dir, q+"/") {
			ps.Untracked = append(ps.Untracked, p)
		}
	}
	return s.WithPhaseState(ps)
}

// forkBase is the commit a forked state stands on: the current phase's
// commit when it finished, else its pre-phase commit; "" before phase 1.
func forkBase(s state.ExecutionState) string {
	i := s.Progress.CurrentPhase
	if i < 0 || i >= len(s.Progress.Phases) {
		return ""
	}
	ps := s.Progress.Phases[i]
	if ps.Status == state.PhaseCompleted && ps.PostCommit != "" {
		return ps.PostCommit
	}
	return ps.PreCommit
}

// copyExecDir copies the parent's execution directory, as the checked-out
// commit has it, to the fork's: the earlier phases' plan, summaries and
// story records the fork's prompts point to. It is untracked until the
// fork's next phase commit takes it.
func copyExecDir(root, from, to string) error {
	src := filepath.Join(root, filepath.FromSlash(from))
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) || from == to {
		return nil
	}
	dst := filepath.Join(root, filepath.FromSlash(to))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return fmt.Errorf("copy the execution directory %s to %s: %w", from, to, err)
	}
	return nil
}
