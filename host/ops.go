package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Cancel marks a run cancelled (the newest unfinished one for an empty
// RunID) with a checkpoint that routes it to END, through
// restore_user_changes when the run put the user's uncommitted changes
// aside (--allow-dirty): those are put back here, on top of what the run
// left in the work tree, unless another process holds the work tree
// (then Resume does it later). Before that, the unfinished phase's own
// changes are undone (nodes.DiscardPhase), so the tree is back at the
// last good commit, as after a halt.
func (h *Host) Cancel(ctx context.Context, req RunRequest) (Outcome, error) {
	return h.cancel(ctx, req.RunID)
}

// alreadyCancelled answers a cancel of the run runID that refused with err
// when the run is cancelled already: another cancel, or a retry of this
// one whose first answer was lost, got there first. What the user asked
// for holds, so it is no refusal; a run that ended otherwise still is.
func (h *Host) alreadyCancelled(ctx context.Context, runID string, err error) (Outcome, bool) {
	if runID == "" || CodeOf(err) != Refused {
		return Outcome{}, false
	}
	snap, serr := h.runner.State(ctx, runID)
	if serr != nil || ViewStatus(snap) != state.RunCancelled {
		return Outcome{}, false
	}
	return Outcome{RunID: runID, Kind: Cancelled, Message: fmt.Sprintf("Run %s was cancelled already.", runID), State: &snap.State}, true
}

func (h *Host) cancel(ctx context.Context, runID string) (Outcome, error) {
	id, snap, err := h.unfinished(ctx, runID, "to cancel", false)
	if err != nil {
		if out, ok := h.alreadyCancelled(ctx, runID, err); ok {
			return out, nil
		}
		return Outcome{}, err
	}
	after, err := h.runner.UpdateState(ctx, id, snap.State.WithStatus(state.RunCancelled), graph.START)
	if err != nil {
		err = h.refusal(ctx, id, err)
		if out, ok := h.alreadyCancelled(ctx, id, err); ok {
			return out, nil
		}
		return Outcome{}, err
	}
	out := Outcome{RunID: id, Kind: Cancelled, Message: fmt.Sprintf("Run %s cancelled.", id), State: &after.State}
	note := func(format string, args ...any) { out.Notes = append(out.Notes, fmt.Sprintf(format, args...)) }
	markTranscriptEnd(h.dir, id)
	phase, running := runningPhase(after.State)
	own := after.State.Run.WorkTree != ""
	records := after.State.Config.Recovery != nil // its last decision records may be uncommitted
	if !running && !after.State.Stash.Pending() && !own && !records {
		return out, nil
	}
	repo := h.repo
	if own {
		r, err := h.repoFor(after.State)
		if err != nil { // its work tree is gone already
			h.endWorkTree(ctx, after.State)
			if l := BranchHint(after.State, h.cfg.Cmd); l != "" {
				note("%s", l)
			}
			return out, nil
		}
		repo = r
	}
	unlock, err := h.lockWorkTree(repo, id)
	if err != nil {
		// The run is cancelled all the same; the tree waits.
		if running {
			note("Phase %d's unfinished changes stay in the work tree, which is not free (%v).", phase, err)
		}
		if after.State.Stash.Pending() {
			note("Your uncommitted changes stay in %s%s until the work tree is free (%v); then: %s",
				workspace.StashRefPrefix, id, err, h.cfg.Cmd("resume", id))
		}
		return out, nil
	}
	defer unlock()
	tidyCancelled(ctx, repo, after.State, phase, running, note)
	h.endWorkTree(ctx, after.State)
	if !after.State.Stash.Pending() {
		return out, nil
	}
	res, err := h.runner.Resume(ctx, id)
	if err != nil {
		return out, h.refusal(ctx, id, err)
	}
	out.State = &res.State
	if l := UserChangesLine(res.State); l != "" {
		note("%s", l)
	}
	return out, nil
}

// tidyCancelled leaves the work tree of run s, just cancelled, at its
// last good commit: the unfinished phase's own changes undone (when one
// was running), the run's last decision records committed; each step's
// outcome goes to note.
func tidyCancelled(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, phase int, running bool, note func(string, ...any)) {
	if running {
		// Before the user's changes come back: the reset must not touch them.
		pre, err := nodes.DiscardPhase(ctx, repo, s, func(msg string) { note("%s", msg) })
		switch {
		case err != nil:
			note("Phase %d's unfinished changes were left in the work tree: %v", phase, err)
		case pre != "":
			note("Phase %d's unfinished changes were undone: the work tree is back at %s, the last good commit.", phase, render.Short(pre))
		}
	}
	if rec, err := nodes.CommitDecisions(ctx, repo, s); err != nil {
		note("The run's last decision records were left uncommitted in %s: %v", s.Run.ExecDir, err)
	} else if rec != "" {
		note("The run's last decision records are committed in %s.", render.Short(rec))
	}
}

// UserChangesLine is the one line that says the user's uncommitted
// changes of a --allow-dirty run are back, naming (up to 10 of) the paths
// the run changed too; "" for a run that put none aside.
func UserChangesLine(s state.ExecutionState) string {
	switch {
	case s.Stash.Commit == "":
		return ""
	case !s.Stash.Restored && !s.Status.Terminal():
		return fmt.Sprintf("Your uncommitted changes are kept in %s%s until the run ends.", workspace.StashRefPrefix, s.Run.ID)
	case !s.Stash.Restored:
		return fmt.Sprintf("Your uncommitted changes are kept in %s%s; gaffer resume %s puts them back.", workspace.StashRefPrefix, s.Run.ID, s.Run.ID)
	case len(s.Stash.Overlap) == 0:
		return "Your uncommitted changes are back in the work tree and the index, as they were."
	}
	paths := s.Stash.Overlap
	more := ""
	if len(paths) > 10 {
		paths, more = paths[:10], fmt.Sprintf(" and %d more", len(paths)-10)
	}
	return fmt.Sprintf("Your uncommitted changes are back; the run also changed %s%s: your version is in the work tree, the run's in its commits.",
		strings.Join(paths, ", "), more)
}

// runningPhase returns the 1-based number of s's phase that was running.
func runningPhase(s state.ExecutionState) (int, bool) {
	i := s.Progress.CurrentPhase()
	if i < 0 || i >= len(s.Progress.Phases) || s.Progress.Phases[i].Status != state.PhaseRunning {
		return 0, false
	}
	return i + 1, true
}

// Status is a run's latest checkpoint (the newest run for an empty RunID).
// A run whose store lost checkpoints its commits prove existed is refused
// (nodes.CheckCommits).
func (h *Host) Status(ctx context.Context, req RunRequest) (RunStatus, error) {
	_, snap, err := h.latest(ctx, req.RunID)
	if err != nil {
		h.mu.Lock()
		starting := h.starting[req.RunID]
		h.mu.Unlock()
		if starting && CodeOf(err) == Refused {
			rs := RunStatus{Status: StatusStarting, Pending: true}
			rs.Snapshot.RunID = req.RunID
			return rs, nil
		}
		return RunStatus{}, err
	}
	if err := h.checkCommits(ctx, snap); err != nil {
		return RunStatus{}, err
	}
	return h.statusOf(ctx, snap), nil
}

// statusOf is snap's RunStatus; a stopped run's carries why it stopped
// (one read of its latest checkpoint's writes).
func (h *Host) statusOf(ctx context.Context, snap graph.Snapshot[state.ExecutionState]) RunStatus {
	rs := RunStatus{Snapshot: snap}
	h.setStatus(ctx, &rs)
	return rs
}

// setStatus sets what rs says of its Snapshot: its status, whether it
// stopped, and why.
func (h *Host) setStatus(ctx context.Context, rs *RunStatus) {
	snap := &rs.Snapshot
	rs.Status = ViewStatus(*snap).String()
	rs.Stopped = h.stopped(*snap)
	if rs.Stopped {
		rs.LastError = h.lastError(ctx, snap.RunID, snap.Seq)
	}
}

// History is a run's checkpoints, newest first (the newest run's for an
// empty RunID), read a page at a time: a long run's full states do not fit
// in memory at once.
func (h *Host) History(ctx context.Context, req RunRequest) ([]Checkpoint, error) {
	runID, err := h.Pick(ctx, req.RunID, "at all", func(state.RunStatus) bool { return true })
	if err != nil {
		return nil, err
	}
	var views []Checkpoint
	err = h.runner.EachCheckpoint(ctx, runID, func(s graph.Snapshot[state.ExecutionState]) error {
		v := Checkpoint{Seq: s.Seq, Parent: s.Parent, Step: s.Step, Ran: nonNil(s.Ran), Next: nonNil(s.Next),
			Status: s.State.Status.String(), Time: s.Time}
		if s.Interrupt != nil {
			v.Status = state.RunAwaitingApproval.String()
			v.Interrupt = s.Interrupt.Node
		}
		if n := len(s.State.Plan.Phases); n > 0 {
			i := s.State.Progress.CurrentPhase()
			v.Phase, v.Phases = i+1, n
			if i >= 0 && i < len(s.State.Progress.Phases) {
				v.Attempt = s.State.Progress.Phases[i].Attempt
			}
		}
		views = append(views, v)
		return nil
	})
	if err != nil {
		return nil, h.refusal(ctx, runID, err)
	}
	return views, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Submit is refused: a host drives the runs it starts (Start); serve's
// Pool queues them.
func (h *Host) Submit(_ context.Context, spec RunSpec) (Outcome, error) {
	return Outcome{}, errorf(Refused, "%w: no gaffer serve holds the store (%s); start one with: gaffer serve", ErrNoServe, h.dir)
}

// ForkBranchPrefix names a fork's branch: gaffer/<run-id>.
const ForkBranchPrefix = "gaffer/"

// Fork copies checkpoint Seq of a run into a new run of its own: its own
// id (its commits carry it), its own creation time and execution
// directory, and its own branch, gaffer/<new-id>, checked out at the
// commit the checkpoint stood on — the pre-phase commit of a phase that
// was under way (that phase runs again from a fresh session: its
// uncommitted work was never kept), the commit of a phase just finished,
// or the commit the parent run started from. The user's untracked and
// ignored files stay; changes to tracked files refuse the fork, since the
// checkout would overwrite them. The new run is not started: Resume (or
// Answer) continues it, on its branch.
func (h *Host) Fork(ctx context.Context, req ForkRequest) (Forked, error) {
	runID, seq := req.RunID, req.Seq
	id := NewRunID(time.Now())
	parent, err := h.runner.History(ctx, runID, 1)
	if err != nil {
		return Forked{}, h.refusal(ctx, runID, err)
	}
	if len(parent) > 0 && (seq == 0 || seq > parent[0].Seq) {
		return Forked{}, errorf(Refused, "run %s has no checkpoint %d (its newest is %d; see %s)", runID, seq, parent[0].Seq, h.cfg.Cmd("history", runID))
	}
	if len(parent) > 0 && parent[0].State.Run.WorkTree != "" {
		return h.forkOwn(ctx, req, id, parent[0].State)
	}
	if err := h.refuseChanges(ctx); err != nil {
		return Forked{}, err
	}
	unlock, err := h.lockWorkTree(h.repo, id)
	if err != nil {
		return Forked{}, err
	}
	defer unlock()
	snap, err := h.runner.Fork(ctx, runID, seq, id)
	if err != nil {
		return Forked{}, h.refusal(ctx, runID, err)
	}
	s, as := forkState(snap, id, time.Now())
	base := forkBase(s)
	if base == "" && len(parent) > 0 && len(parent[0].State.Progress.Phases) > 0 {
		base = parent[0].State.Progress.Phases[0].PreCommit // where the parent started
	}
	if base == "" {
		if base, err = h.repo.Head(ctx); err != nil {
			return Forked{}, errorf(Refused, "fork: %w", err)
		}
	}
	untracked, err := h.repo.Untracked(ctx)
	if err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	branch := ForkBranchPrefix + id
	if err := h.repo.CheckoutNewBranch(ctx, branch, base, untracked); err != nil {
		if errors.Is(err, workspace.ErrResetConflict) {
			return Forked{}, errorf(Refused, "fork: check out %s at %s: %w", branch, render.Short(base), err)
		}
		return Forked{}, fmt.Errorf("fork: check out %s at %s: %w", branch, render.Short(base), err)
	}
	if err := copyExecDir(h.repo.Root(), snap.State.Run.ExecDir, s.Run.ExecDir); err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	if untracked, err = h.repo.Untracked(ctx); err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	if s, err = keepUntracked(s, untracked); err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	if _, err := h.runner.UpdateState(ctx, id, s, as); err != nil {
		return Forked{}, fmt.Errorf("fork: set the new run id: %w", err)
	}
	return Forked{RunID: id, From: runID, Seq: seq, Branch: branch, Base: base}, nil
}

// refuseChanges refuses a checkout with changes to tracked files, which
// a fork's checkout of its own branch would overwrite.
func (h *Host) refuseChanges(ctx context.Context) error {
	st, err := h.repo.Status(ctx)
	if err != nil {
		return errorf(Refused, "read the work tree's status: %w", err)
	}
	if paths := DirtPaths(workspace.Status{Modified: st.Modified, Added: st.Added, Deleted: st.Deleted}, nil); len(paths) > 0 {
		return errorf(Refused, "%w (%s: %s) in %s; the fork checks out its own branch: commit or stash them first",
			ErrDirtyTree, render.Plural(len(paths), "path"), render.ListPaths(paths, 10), h.repo.Root())
	}
	return nil
}

// forkOwn forks a run that works in its own work tree: the fork gets one
// too, on its branch gaffer/<new-id> at the commit the checkpoint stood on
// (see Fork); the user's checkout is not touched.
func (h *Host) forkOwn(ctx context.Context, req ForkRequest, id string, parent state.ExecutionState) (Forked, error) {
	snap, err := h.runner.Fork(ctx, req.RunID, req.Seq, id)
	if err != nil {
		return Forked{}, h.refusal(ctx, req.RunID, err)
	}
	s, as := forkState(snap, id, time.Now())
	base := forkBase(s)
	if base == "" && len(parent.Progress.Phases) > 0 {
		base = parent.Progress.Phases[0].PreCommit
	}
	if err := h.forkRefusal(ctx, req.RunID, base); err != nil {
		return Forked{}, err
	}
	if s, err = h.newWorkTree(ctx, s, base); err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	repo, err := h.repoFor(s)
	if err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	unlock, err := h.lockWorkTree(repo, id)
	if err != nil {
		return Forked{}, err
	}
	defer unlock()
	if base == "" {
		if base, err = repo.Head(ctx); err != nil {
			return Forked{}, errorf(Refused, "fork: %w", err)
		}
	}
	if err := copyExecDir(repo.Root(), snap.State.Run.ExecDir, s.Run.ExecDir); err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	untracked, err := repo.Untracked(ctx)
	if err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	if s, err = keepUntracked(s, untracked); err != nil {
		return Forked{}, fmt.Errorf("fork: %w", err)
	}
	if h.remote != nil {
		if s, err = h.publishFork(ctx, repo, s, req.RunID, req.Seq, base); err != nil {
			return Forked{}, fmt.Errorf("fork: %w", err)
		}
	}
	if _, err := h.runner.UpdateState(ctx, id, s, as); err != nil {
		return Forked{}, fmt.Errorf("fork: set the new run id: %w", err)
	}
	if h.remote != nil && h.cfg.Shared {
		h.endForkClone(ctx, s) // a serve resumes it, in a clone of its own
	}
	return Forked{RunID: id, From: req.RunID, Seq: req.Seq, Branch: RunBranch(id), Base: base}, nil
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
	if i := s.Progress.CurrentPhase(); i >= 0 && i < len(s.Progress.Phases) && s.Progress.Phases[i].Status == state.PhaseRunning &&
		s.Approval.Decision == state.DecisionApproved && as != nodes.NodeApproval && as != nodes.NodeNextTask {
		s.Progress.Phases = slices.Clone(s.Progress.Phases)
		s.Progress.Phases[i] = s.Progress.Phases[i].FreshLanes()
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
	i := s.Progress.CurrentPhase()
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
	i := s.Progress.CurrentPhase()
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

// DirtPaths lists the changes of st, one "M path", "A path", "D path" or
// "? path" each, without the run's own inputs.
func DirtPaths(st workspace.Status, inputs []string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(st.String()), "\n") {
		if l == "" || (strings.HasPrefix(l, "? ") && slices.Contains(inputs, l[2:])) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Fail ends an unfinished run as failed, with cause as its last error:
// serve's queue gives up a run its holders kept stopping with. A run that
// has ended already, or that has no checkpoint, is left as it is.
func (h *Host) Fail(ctx context.Context, runID string, cause error) error {
	snap, err := h.runner.State(ctx, runID)
	if err != nil || snap.State.Status.Terminal() {
		return nil // no checkpoint to fail: the cause is all there is
	}
	if _, err := h.runner.UpdateState(ctx, runID, snap.State.WithStatus(state.RunFailed).WithError(cause.Error()), graph.START); err != nil {
		return h.refusal(ctx, runID, err)
	}
	markTranscriptEnd(h.dir, runID)
	return nil
}
