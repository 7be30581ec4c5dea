package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// A run works on its own branch, gaffer/<run-id>, in its own linked work
// tree, <store>.worktrees/<run-id> (beside the store, like its .logs and
// .groups), made from the user's HEAD when the run starts: the user's
// checkout is never touched while it goes on, and several runs of one
// repository execute at once. The untracked files the run needs (a .env)
// are copied in from the repository's .worktreeinclude. When the run
// ends, its work tree goes and its branch stays. The trees' git work
// (making, checking and removing them, on one host or on a shared remote)
// is workspace.RunTrees'; which run has one, and when it goes, is the
// host's. A run in place
// (RunSpec.InPlace, `gaffer run --in-place`; every run stored before work
// trees existed) works in the user's checkout as before.

// WorkTreesDir is where the work trees of the runs of the store at
// storeDir are kept: beside it.
func WorkTreesDir(storeDir string) string { return storeDir + ".worktrees" }

// WorkTreeDir is run id's own work tree, absolute (for a run that has one).
func (h *Host) WorkTreeDir(id string) string { return h.trees.Path(id) }

// runTrees are the runs' own work trees of the host whose local directory
// is dir: linked work trees of repo, or clones of remote.
func runTrees(repo *workspace.Repo, dir string, remote *workspace.Mirror) workspace.RunTrees {
	trees := WorkTreesDir(dir)
	if abs, err := filepath.Abs(trees); err == nil {
		trees = abs
	}
	return workspace.RunTrees{Repo: repo, Dir: trees, Mirror: remote}
}

// RunBranch is the branch of a run that works in its own work tree.
func RunBranch(runID string) string { return ForkBranchPrefix + runID }

// BranchHint is the line that tells where a finished run's work is: its
// branch, for a run that worked in its own work tree, and the merge
// command as cmd formats it (Config.Cmd); "" for one in place.
func BranchHint(s state.ExecutionState, cmd func(args ...string) string) string {
	if s.Run.WorkTree == "" {
		return ""
	}
	b := RunBranch(s.Run.ID)
	return fmt.Sprintf("Branch %s holds the run's commits: %s takes them into your branch (or open a PR from it)", b, cmd("merge", s.Run.ID))
}

// WhereLine is the line that tells, as run s starts, where its work goes:
// its branch and work tree and the command that takes the work into
// branch (the user's checked-out branch, "" when HEAD is detached), as
// cmd formats it (Config.Cmd); or, for a run in place, that it commits
// on branch.
func WhereLine(s state.ExecutionState, branch string, cmd func(args ...string) string) string {
	if s.Run.WorkTree == "" {
		if branch == "" {
			return "It works in place: its commits go on top of your detached HEAD, in this checkout."
		}
		return fmt.Sprintf("It works in place: its commits go on your branch %s, in this checkout.", branch)
	}
	into := "your branch"
	if branch != "" {
		into = branch
	}
	return fmt.Sprintf("Its work goes to branch %s (work tree %s), not to your checkout: when it is done, %s takes it into %s.",
		RunBranch(s.Run.ID), s.Run.WorkTree, cmd("merge", s.Run.ID), into)
}

// LeftOutLine is the line that tells a run in its own work tree started
// from HEAD without the user's uncommitted changes to paths (tracked
// files, at most 10 named).
func LeftOutLine(paths []string) string {
	return fmt.Sprintf("Your uncommitted changes to %s are not in this run: it starts from HEAD without them "+
		"(commit them first, or run with --in-place --allow-dirty to work on them).", workspace.PathList(paths, 10))
}

// Uncommitted lists the tracked files st has changes to (staged or not),
// sorted; untracked files are not the user's edits to the code the run
// starts from, and .worktreeinclude names those a run needs.
func Uncommitted(st workspace.Status) []string {
	paths := append(append(append([]string{}, st.Modified...), st.Added...), st.Deleted...)
	sort.Strings(paths)
	return paths
}

// newWorkTree makes run s's own work tree at base (the user's HEAD, or
// on a remote the remote's, when ""), on its branch, copies the files
// .worktreeinclude names into it and records it in s: those files are the
// run's inputs (never committed, never reset away), and the user's
// uncommitted changes stay where they are (--allow-dirty has nothing to
// put aside).
func (h *Host) newWorkTree(ctx context.Context, s state.ExecutionState, base string) (state.ExecutionState, error) {
	if h.remote != nil {
		h.repos.Forget(h.trees.Path(s.Run.ID))
	}
	dir, inputs, err := h.trees.Make(ctx, s.Run.ID, RunBranch(s.Run.ID), base)
	var none *workspace.NoCommitError
	switch {
	case errors.As(err, &none) && none.Remote != "":
		return s, errorf(Refused, "%w; push one first", none)
	case errors.As(err, &none):
		return s, errorf(Refused, "%w; make one first", none)
	case err != nil:
		return s, fmt.Errorf("run %s: %w", s.Run.ID, err)
	}
	c := s.Clone()
	c.Run.WorkTree = dir
	c.Config.Inputs = inputs
	c.Config.AllowDirty = false
	return c, nil
}

// runRepo is the repository run s works in, made ready to drive it: a
// run's work tree that is gone (removed by hand) is made again on its
// branch, and the git lock files a killed process left in it go.
func (h *Host) runRepo(ctx context.Context, s state.ExecutionState) (*workspace.Repo, error) {
	dir := s.Run.WorkTree
	if dir == "" {
		return h.repo, nil
	}
	if h.remote != nil {
		return h.remoteRepoOf(ctx, s)
	}
	if made, err := h.trees.Restore(ctx, dir, RunBranch(s.Run.ID)); err != nil {
		return nil, fmt.Errorf("run %s: %w", s.Run.ID, err)
	} else if made {
		h.repos.Forget(dir)
	}
	if err := h.recoverLocks(dir); err != nil {
		return nil, err
	}
	return h.repos.At(dir)
}

// recoverLocks removes the git lock files a killed process left in the
// work tree at dir (nodes.RecoverGitLocks), telling the Front.
func (h *Host) recoverLocks(dir string) error {
	removed, err := nodes.RecoverGitLocks(dir)
	if err != nil {
		return err
	}
	if len(removed) > 0 {
		h.front.Notice(fmt.Sprintf("gaffer: removed git lock files left by a killed gaffer process: %s", strings.Join(removed, ", ")))
	}
	return nil
}

// repoOf is the repository run s works in, as it is.
func (h *Host) repoOf(s state.ExecutionState) *workspace.Repo {
	if r, err := h.repoFor(s); err == nil {
		return r
	}
	return h.repo
}

// endWorkTree removes the work tree of a run that ended, keeping its
// branch; a run in place, or one not ended, keeps its tree.
func (h *Host) endWorkTree(ctx context.Context, s state.ExecutionState) {
	dir := h.runDir(s)
	if dir == "" || !s.Status.Terminal() {
		return
	}
	h.repos.Forget(dir)
	if err := h.trees.Remove(ctx, dir); err != nil {
		what := "remove a finished run's work tree"
		if h.remote != nil {
			what = "remove a finished run's clone" // a clone of the remote, where the run's branch stays
		}
		h.log.Warn(what, "run", s.Run.ID, "dir", dir, "err", err)
	}
}

// taken reports whether a run's attempt here stopped because another
// host took the run over: a write refused by the fence. (Serve's queue
// saying the lease went elsewhere is its own to tell: it drops the clone,
// DropClone.)
func taken(out Outcome, err error) bool {
	return errors.Is(err, checkpoint.ErrFenced) || errors.Is(out.Err, checkpoint.ErrFenced)
}

// DropClone removes this host's clone of run id, whose attempt here
// stopped because another host took the run over: its work is on the
// shared remote, and the clone would only stay behind. A work tree of a
// run on one host (no remote) is left: the run is still this host's.
func (h *Host) DropClone(id string) {
	if h.remote == nil {
		return
	}
	dir := h.trees.Path(id)
	h.repos.Forget(dir)
	if err := h.trees.Remove(context.Background(), dir); err != nil {
		h.log.Warn("remove the clone of a run another host took over", "run", id, "dir", dir, "err", err)
	}
}

// discardStart removes what the start of run id made before its first
// checkpoint — its work tree (or clone) and its branch — once a cancel
// stopped it there: a run with no checkpoint has nothing to keep.
func (h *Host) discardStart(ctx context.Context, id string) error {
	h.repos.Forget(h.trees.Path(id))
	if err := h.trees.Discard(ctx, id, RunBranch(id)); err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	return nil
}

// sweepWorkTrees removes the work trees of runs that ended while their
// process was killed before it removed them (endWorkTree): a tree whose
// run's latest checkpoint is terminal goes, its branch stays. Trees of
// runs not ended, or with no checkpoint yet (a start cut short, which
// resume or serve's journal rebuilds), are left alone.
func (h *Host) sweepWorkTrees(ctx context.Context) {
	for _, id := range h.trees.Runs() {
		snap, err := h.runner.State(ctx, id)
		if err != nil || snap.State.Run.WorkTree == "" || !snap.State.Status.Terminal() {
			continue
		}
		h.endWorkTree(ctx, snap.State)
	}
}
