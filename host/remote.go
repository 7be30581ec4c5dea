package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/internal/render"

	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Work trees across hosts. On a database store with a remote
// (Config.Remote, `gaffer serve --remote URL|PATH`) the run's branch on
// that shared remote is the durable result, and any host may take a run
// over:
//
//   - Each host keeps a mirror of the remote (`git clone --mirror`) at
//     <dir>.mirror, beside its local directory, fetched before each run it
//     claims (Start or Resume, which is where a claim lands), with
//     --prune: a branch deleted on the remote goes from the mirror. Its
//     objects are never pruned (workspace.Mirror: the clones borrow them).
//   - Each run gets its own clone of the remote (`git clone --reference`
//     the mirror, so objects are not copied) at <dir>.worktrees/<run-id>,
//     on branch gaffer/<run-id>. A new run's branch starts at the
//     remote's HEAD (the base given to a fork) and is pushed at once, if
//     the remote has no such branch yet.
//   - Each commit of a phase (and the run's record) carries the run's
//     lease token (nodes.TrailerLease) and is pushed with compare-and-swap
//     (`git push --force-with-lease=refs/heads/gaffer/<id>:<old tip>`)
//     before the checkpoint that records it (nodes.Config.Publish): a
//     checkpoint that names a commit names a pushed one. A push the lease
//     refuses stops the attempt; nothing is overwritten.
//   - Before a host drives a run it compares the branch's tip on the
//     remote with the checkpoint (checkRemoteTip): the tip is the
//     checkpoint's commit, or that commit plus only this run's own commits
//     (a holder that pushed and died before its checkpoint: the nodes
//     adopt them, as after a crash on one host) → go on, in a clone made
//     again at the tip when the host's one is elsewhere; any other tip is
//     foreign history → the run stops, as for a HEAD that moved
//     (*nodes.RemoteMovedError, one line naming the tip and the fix).
//
// The remote is never implied (not even the repository's origin): pushing
// the runs' branches is something a user asks for. A store directory, a
// run in place, and a command that opens the store beside a serve
// (Config.Shared) push nothing; but `gaffer fork --remote URL`, which
// pushes the fork's branch (publishFork), and is refused without it when
// the parent run worked on a remote (forkRefusal).

// newRemote is the remote of cfg for a host whose local directory is dir,
// nil when the host pushes nothing.
func newRemote(cfg Config, dir string) *workspace.Mirror {
	if cfg.Remote == "" {
		return nil
	}
	url := cfg.Remote
	if _, err := os.Stat(url); err == nil {
		if abs, err := filepath.Abs(url); err == nil {
			url = abs
		}
	}
	mirror := dir + ".mirror"
	if abs, err := filepath.Abs(mirror); err == nil {
		mirror = abs
	}
	return workspace.NewMirror(url, mirror)
}

// remoteRepoOf is runRepo on a remote: the mirror is fetched, the
// branch's tip checked against the checkpoint (checkRemoteTip), and the
// host's clone of the run used when it is at that tip, made again there
// otherwise (a run this host never had, or one another host moved on).
func (h *Host) remoteRepoOf(ctx context.Context, s state.ExecutionState) (*workspace.Repo, error) {
	m, branch, dir := h.remote, RunBranch(s.Run.ID), h.WorkTreeDir(s.Run.ID)
	if err := m.Sync(ctx); err != nil {
		return nil, fmt.Errorf("run %s: %w", s.Run.ID, err)
	}
	tip := m.Tip(ctx, branch)
	if tip == "" && expectedTip(s) == "" {
		// Started, never checkpointed past its start: make it as new.
		if _, err := h.newWorkTree(ctx, s, ""); err != nil {
			return nil, err
		}
		return h.repos.At(dir)
	}
	if err := h.checkRemoteTip(ctx, s, tip); err != nil {
		return nil, err
	}
	usable, err := h.trees.Usable(ctx, s.Run.ID, branch, tip)
	if err != nil {
		h.log.Info("make a run's clone again", "run", s.Run.ID, "dir", dir, "err", err)
	}
	if usable {
		if err := h.recoverLocks(dir); err != nil {
			return nil, err
		}
		return h.repos.At(dir)
	}
	h.repos.Forget(dir)
	if err := h.trees.Reclone(ctx, s.Run.ID, branch, s.Config.Inputs); err != nil {
		return nil, fmt.Errorf("run %s: %w", s.Run.ID, err)
	}
	if tip == expectedTip(s) {
		if err := h.redoPhase(ctx, s.Run.ID); err != nil {
			return nil, err
		}
	}
	return h.repos.At(dir)
}

// redoPhase makes the phase in progress of run id start again with a
// fresh session when its checkpoint relies on work that was in another
// host's clone (nodes.RedoPhase). The checkpoint written stands for
// next_task, so phased_execution follows.
func (h *Host) redoPhase(ctx context.Context, id string) error {
	snap, err := h.runner.State(ctx, id)
	if err != nil {
		return nil // no checkpoint yet: nothing to redo
	}
	c, ok := nodes.RedoPhase(snap.State, h.WorkTreeDir(id))
	if !ok {
		return nil
	}
	if _, err := h.runner.UpdateState(ctx, id, c, nodes.NodeNextTask); err != nil {
		return h.refusal(ctx, id, err)
	}
	h.log.Info("the phase in progress starts again: its work was in another host's clone", "run", id, "phase", c.Progress.CurrentPhase()+1)
	return nil
}

// maxOwnAhead bounds how far the remote's tip may be ahead of the
// checkpoint's commit with the run's own commits: a phase pushes at most
// two (the phase's and the run's record).
const maxOwnAhead = 8

// expectedTip is where run s's checkpoint left its branch: the current
// phase's commit once it has one, else the commit the phase started at;
// "" before the first phase.
func expectedTip(s state.ExecutionState) string {
	if len(s.Progress.Phases) == 0 {
		return ""
	}
	ps, err := s.PhaseState(s.Progress.CurrentPhase())
	if err != nil {
		return ""
	}
	if ps.PostCommit != "" {
		return ps.PostCommit
	}
	return ps.PreCommit
}

// checkRemoteTip refuses (*nodes.RemoteMovedError) a tip of run s's
// branch on the remote that is neither where its checkpoint left it nor
// that commit followed only by this run's own commits.
func (h *Host) checkRemoteTip(ctx context.Context, s state.ExecutionState, tip string) error {
	want := expectedTip(s)
	if want == "" || tip == want {
		return nil
	}
	moved := &nodes.RemoteMovedError{Branch: RunBranch(s.Run.ID), Tip: tip, Expected: want}
	if tip == "" {
		return moved
	}
	commits, err := h.remote.FirstParents(ctx, tip, maxOwnAhead+1, nodes.TrailerRun)
	if err != nil {
		return fmt.Errorf("run %s: read its branch on the remote: %w", s.Run.ID, err)
	}
	for _, c := range commits {
		if c.Hash == want {
			return nil
		}
		if c.Value != s.Run.ID {
			return moved
		}
	}
	return moved
}

// publish is nodes.Config.Publish on a remote: commit is pushed from
// run s's clone to its branch if the branch is at old there. A branch
// already at commit, or past it at the clone's own HEAD (both pushed
// before a crash), is success; one elsewhere is a *nodes.RemoteMovedError.
func (h *Host) publish(ctx context.Context, s state.ExecutionState, commit, old string) error {
	err := workspace.PushLease(ctx, h.runDir(s), RunBranch(s.Run.ID), commit, old)
	var moved *workspace.BranchMovedError
	if errors.As(err, &moved) {
		return &nodes.RemoteMovedError{Branch: moved.Branch, Tip: moved.Tip, Expected: moved.Expected}
	}
	return err
}

// runDir is the directory of run s's own work tree on this host: the one
// its state names, or on a remote the host's own clone (the state names
// the clone of the host that started it).
func (h *Host) runDir(s state.ExecutionState) string {
	if s.Run.WorkTree != "" && h.remote != nil {
		return h.WorkTreeDir(s.Run.ID)
	}
	return s.Run.WorkTree
}

// repoFor is nodes.Config.RepoFor: the repository of runDir.
func (h *Host) repoFor(s state.ExecutionState) (*workspace.Repo, error) {
	return h.repos.At(h.runDir(s))
}

// A fork on a remote (Fork of a run whose branch is on the shared
// remote): its branch gaffer/<fork> is pushed at the commit the forked
// checkpoint stood on (newRemoteTree), and the parent's execution
// directory copied into the fork's (copyExecDir) is committed on it at
// once, as the fork's own commit (trailer Gaffer-Run: <fork>), and pushed:
// untracked, it would be in the clone of the host that forked only, and a
// serve on any other host resumes the fork in a clone of its own. A phase
// under way, which the fork runs again, starts from that commit.

// publishFork commits the fork s's execution directory in its clone
// repo, if the copy put anything there, and pushes it to the fork's
// branch, which is at base on the remote; s's phase under way then
// starts at that commit. It returns s as it is when there is nothing to
// commit.
func (h *Host) publishFork(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, parent string, seq uint64, base string) (state.ExecutionState, error) {
	other, err := repo.UntrackedOutside(ctx, []string{s.Run.ExecDir})
	if err != nil {
		return s, err
	}
	msg := fmt.Sprintf("gaffer: fork of %s at checkpoint %d", parent, seq)
	commit, err := repo.Commit(ctx, msg, []workspace.Trailer{{Key: nodes.TrailerRun, Value: s.Run.ID}}, workspace.CommitOptions{Exclude: other})
	if errors.Is(err, workspace.ErrNothingToCommit) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("commit the execution directory %s: %w", s.Run.ExecDir, err)
	}
	if err := h.publish(ctx, s, commit, base); err != nil {
		return s, err
	}
	i := s.Progress.CurrentPhase()
	if i < 0 || i >= len(s.Progress.Phases) || s.Progress.Phases[i].Status != state.PhaseRunning {
		return s, nil // the next phase starts at HEAD, the commit
	}
	ps, err := s.PhaseState(i)
	if err != nil {
		return s, err
	}
	ps = ps.WithPreCommit(commit)
	ps.PostCommit = ""
	return s.WithPhaseState(ps)
}

// forkRefusal is the refusal of a fork that cannot be made here: the
// parent run worked on the serves' shared remote (its commit base is not
// in this host's repository, or carries a lease token, nodes.TrailerLease,
// which only a pushed commit has) and this host knows of no remote (a
// command through the database without --remote): a fork made in a local
// work tree would have no branch on the remote for a serve to resume.
// nil when a remote is known or base is a local commit.
func (h *Host) forkRefusal(ctx context.Context, parent, base string) error {
	if h.remote != nil || base == "" {
		return nil
	}
	trailers, err := h.repo.Trailers(ctx, base)
	if lease, _ := workspace.TrailerValue(trailers, nodes.TrailerLease); err == nil && lease == "" {
		return nil
	}
	return errorf(Refused, "fork: run %s worked on a shared remote (its commit %s is pushed there): pass --remote URL, the remote of its gaffer serve",
		parent, render.Short(base))
}

// endForkClone removes the clone a command beside the serves (Shared)
// made for fork s: the fork is on the remote, and the serve that resumes
// it makes its own.
func (h *Host) endForkClone(ctx context.Context, s state.ExecutionState) {
	dir := h.runDir(s)
	h.repos.Forget(dir)
	if err := h.trees.Remove(ctx, dir); err != nil {
		h.log.Warn("remove a fork's clone", "run", s.Run.ID, "dir", dir, "err", err)
	}
}

// inPlaceRefusal refuses a run in place (RunSpec.InPlace) on a host with
// a shared remote: it would work in this host's checkout, on whatever
// branch is checked out there, push nothing, and leave nothing another
// host could take over; a run in its own clone is what the remote is for.
func (h *Host) inPlaceRefusal(spec RunSpec) error {
	if !spec.InPlace || h.remote == nil {
		return nil
	}
	return errorf(Refused, "--in-place works in one host's checkout, and these serves push each run's branch to the shared remote %s instead: leave --in-place out",
		h.remote.URL)
}
