package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// A run started with --allow-dirty never discards the user's uncommitted
// work. When the plan is approved, before phase 1, the approval node
// records the user's changes — staged entries, tracked edits and
// untracked files that are not ignored — as git objects kept alive by
// refs/gaffer/stash/<run-id> (workspace.Stash) and puts the commit's hash
// in the state; that state is checkpointed before phase 1 cleans the tree.
// Once the run's status is terminal (done, halted, failed, rejected or
// cancelled) every router sends it through restore_user_changes, which
// puts the changes back byte for byte on top of where the run left HEAD
// (workspace.RestoreStash), drops the ref and records Stash.Restored.
// Killed anywhere in between, `gaffer resume` gets there: the restore is
// idempotent and works from the hash in the state.

// stashUserChanges records the user's uncommitted changes of a run
// started with --allow-dirty, once: the hash goes into the state the
// calling node returns. It leaves the work tree as it is. The execution
// directory and the run's inputs (RunConfig.Inputs) are not the user's
// changes and stay out of it.
func (w *workflow) stashUserChanges(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	if !s.Config.AllowDirty || s.Stash.Commit != "" {
		return s, nil
	}
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	h, err := repo.Stash(ctx, s.Run.ID, append([]string{s.Run.ExecDir}, s.Config.Inputs...))
	if err != nil {
		return s, fmt.Errorf("nodes: put the user's uncommitted changes aside: %w", err)
	}
	if h == "" {
		return s, nil
	}
	c := s
	c.Stash = state.UserStash{Commit: h}
	return c, nil
}

// restore puts the user's changes back at the end of a run and drops the
// stash's ref. Where the run changed a path the user had changed too,
// the user's version is in the work tree and the run's in its commits;
// those paths are kept in Stash.Overlap.
func (w *workflow) restore(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	if !s.Stash.Pending() {
		return s, nil
	}
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	var overlap []string
	err = w.gitOp(repo, func() (err error) {
		overlap, err = repo.RestoreStash(ctx, s.Stash.Commit)
		return err
	})
	if err != nil {
		return s, fmt.Errorf("nodes: put back the user's uncommitted changes (commit %s): %w", short(s.Stash.Commit), err)
	}
	if w.cfg.AfterRestore != nil {
		w.cfg.AfterRestore()
	}
	if err := repo.DropStash(ctx, s.Run.ID); err != nil {
		return s, fmt.Errorf("nodes: put back the user's uncommitted changes: %w", err)
	}
	c := s
	c.Stash.Restored, c.Stash.Overlap = true, overlap
	w.cfg.Logger.Info("the user's uncommitted changes are back", "run", s.Run.ID, "also_changed_by_the_run", strings.Join(overlap, ", "))
	return c, nil
}

// nestedOnly keeps the nested repositories ("dir/") of an untracked
// snapshot: the user's untracked files are in the stash, and the clean
// tree before phase 1 must not keep them.
func nestedOnly(untracked []string) []string {
	var out []string
	for _, p := range untracked {
		if strings.HasSuffix(p, "/") {
			out = append(out, p)
		}
	}
	return out
}
