package nodes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// The trailers of gaffer's commits.
const (
	TrailerRun     = "Gaffer-Run"
	TrailerPhase   = "Gaffer-Phase"
	TrailerAttempt = "Gaffer-Attempt"
	TrailerRecord  = "Gaffer-Record"
	// TrailerLease is the fencing token of the run's checkpoint lease
	// under which a commit was made (graph.LeaseToken): on a shared
	// remote (Config.Publish) it names the holder that pushed it.
	TrailerLease = "Gaffer-Lease"
)

// preparePhase makes phase i the current one and records what a reset of
// it needs: HEAD (the pre-phase commit) and the user's untracked files.
// Both reach the checkpoint of the step that calls it, before the phase's
// agent starts.
func (w *workflow) preparePhase(ctx context.Context, s state.ExecutionState, i int) (state.ExecutionState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	c := s
	ps, err := c.PhaseState(i)
	if err != nil {
		return s, fmt.Errorf("nodes: prepare phase %d: %w", i+1, err)
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return s, fmt.Errorf("nodes: prepare phase %d: %w", i+1, err)
	}
	// Right after this process committed the phase before (notes.go),
	// the tree is clean but for that phase's untracked files: no walk.
	// Otherwise one walk tells both the untracked files and whether the
	// tree is clean, which the phase's first session then need not ask.
	var st *workspace.Status
	known := false
	if i > 0 {
		if prev, err := c.PhaseState(i - 1); err == nil {
			if n, ok := w.take(s, noteClean, prev, head); ok {
				ps.Untracked, known = stillThere(repo.Root(), n.untracked), true
			}
		}
	}
	if !known {
		got, err := repo.StatusOutside(ctx, []string{s.Run.ExecDir})
		if err != nil {
			return s, fmt.Errorf("nodes: prepare phase %d: %w", i+1, err)
		}
		st = &got
		ps.Untracked = outside(got.Untracked, s.Run.ExecDir)
	}
	ps.PreCommit = head
	if ps, err = recordGitSettings(ctx, repo, ps); err != nil {
		return s, err
	}
	if i == 0 && c.Stash.Pending() {
		// The user's files are in the stash: phase 1 starts clean, but
		// for the run's own inputs, which the stash left in place.
		ps.Untracked = append(nestedOnly(ps.Untracked), inputsIn(ps.Untracked, s.Config.Inputs)...)
	}
	if st == nil || !dirty(*st, keepList(s, ps)) {
		w.note(s, treeNote{kind: noteClean, phase: i, head: head})
	} else {
		w.forget(s)
	}
	ps.Status, ps.Attempt, ps.StartedAt = state.PhaseRunning, 1, w.cfg.Clock().UTC()
	ps.Review, ps.Rejections, ps.Error, ps.ErrorKind = nil, nil, "", ""
	setTasks(&ps, state.PhaseRunning)
	ps.Lanes = state.NewLanes(s.Plan.PhaseLanes(i), head)
	return c.WithPhaseState(ps)
}

// phase runs one developer session on the current phase. A fresh session
// (no session to continue: a new phase, a new attempt, or a resume after a
// crash mid-agent) first puts the tree back at the pre-phase commit if it
// is anywhere else. The execution directory's plan.md and, on a retry,
// review-feedback.md are written before the agent starts.
func (w *workflow) phase(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	ps, ok := current(s)
	if !ok {
		return s, ErrNoPhase
	}
	if c, stopped, err := w.budgetStop(ctx, s, ps); err != nil || stopped {
		return c, err
	}
	if ps.Parallel() {
		return w.dispatch(ctx, s, ps)
	}
	lane := soleLane(s, ps)
	if s, err = w.readySoleTree(ctx, s, ps, lane); err != nil {
		return s, err
	}
	if err := w.writePhaseFiles(s, ps); err != nil {
		return s, err
	}
	d, sess, err := w.soleSession(s, ps, lane, repo.Root())
	if err != nil {
		return s, err
	}
	w.ran.Store(s.Run.ID, ps.Index)
	rep, err := w.session(ctx, d, sess)
	if err != nil {
		if !driverFailure(ctx, s, err) {
			return s, err
		}
		return w.soleDriverFailed(ctx, s, ps, lane, rep, err)
	}
	return w.soleSessionDone(ctx, s, ps, lane, sess, rep)
}

// readySoleTree readies the run's tree for the session of a phase of one
// lane: a fresh session (lane has no session id) starts from the
// pre-phase commit (ensureAtPreCommit); the temporary files go; and the
// Doctor's fix runs on the reset tree, before the session that retries
// the phase (fix.go). It returns s with the fix's result.
func (w *workflow) readySoleTree(ctx context.Context, s state.ExecutionState, ps state.PhaseState, lane state.LaneProgress) (state.ExecutionState, error) {
	fresh := lane.SessionID == ""
	if fresh {
		if err := w.ensureAtPreCommit(ctx, s, ps); err != nil {
			return s, err
		}
	}
	if err := w.cleanTemps(s); err != nil {
		return s, err
	}
	if !fresh {
		return s, nil
	}
	return w.runFix(ctx, s, ps)
}

// writePhaseFiles writes the execution directory's files a phase's
// sessions read before they start: plan.md, the pending summary
// (writePendingSummary) and, on a retry after a rejected review,
// review-feedback.md.
func (w *workflow) writePhaseFiles(s state.ExecutionState, ps state.PhaseState) error {
	if err := w.write(s, planPath(s), s.Plan.Markdown); err != nil {
		return err
	}
	if err := w.writePendingSummary(s, ps); err != nil {
		return err
	}
	if ps.Review != nil && !ps.Review.Approved {
		return w.write(s, feedbackPath(s, ps.Index), RenderFeedback(s, ps))
	}
	return nil
}

// soleSession is the developer's driver and the session of a phase of
// one lane, in dir (the run's tree): the phase's prompt with the story so
// far, continuing lane's session when it has one.
func (w *workflow) soleSession(s state.ExecutionState, ps state.PhaseState, lane state.LaneProgress, dir string) (agent.Driver, agent.Session, error) {
	sc, err := w.phaseStory(s, ps)
	if err != nil {
		return nil, agent.Session{}, err
	}
	prompt, err := PhasePromptWith(s, sc)
	if err != nil {
		return nil, agent.Session{}, err
	}
	d, err := w.driver(agent.RoleDeveloper, s.Config)
	if err != nil {
		return nil, agent.Session{}, err
	}
	return d, agent.Session{
		Role: agent.RoleDeveloper, RunID: s.Run.ID, Phase: ps.Index + 1, Attempt: ps.Attempt,
		Iteration: lane.Iteration + 1, Prompt: prompt, Dir: dir,
		SessionID: lane.SessionID, Tools: agent.DefaultTools(agent.RoleDeveloper),
		StoryDir: storyDir(s), Model: escalatedModel(s, ps),
	}, nil
}

// soleSessionID is the id a session of phase ps is known by when its
// driver gave none.
func soleSessionID(s state.ExecutionState, ps state.PhaseState) string {
	return fmt.Sprintf("%s-p%d-a%d", s.Run.ID, ps.Index+1, ps.Attempt)
}

// soleDriverFailed records, with recovery on, a session of a phase of one
// lane that its driver could not run (a model endpoint's 5xx, 429,
// refused connection, err): a failed attempt of its own kind, which the
// Doctor sees at once.
func (w *workflow) soleDriverFailed(ctx context.Context, s state.ExecutionState, ps state.PhaseState, lane state.LaneProgress, rep agent.Report, err error) (state.ExecutionState, error) {
	c := w.sessionUsage(ctx, s, agent.RoleDeveloper, rep.Usage, rep.Expansions)
	lane.SessionID = soleSessionID(s, ps)
	lane.Status, lane.Error, lane.Usage = state.LaneFailed, err.Error(), lane.Usage.Add(rep.Usage)
	ps.Status, ps.Error, ps.ErrorKind = state.PhaseRunning, err.Error(), errorKindDriver
	return c.WithPhaseState(withSoleLane(ps, lane))
}

// soleSessionDone records the finished session of a phase of one lane:
// its usage and decision record, its session id, the git settings it
// must not have changed, and what it wrote (recordWritten); the lane
// fails when the agent reported failure or, under the declared files'
// rules, wrote elsewhere (checkDeclared).
func (w *workflow) soleSessionDone(ctx context.Context, s state.ExecutionState, ps state.PhaseState, lane state.LaneProgress, sess agent.Session, rep agent.Report) (state.ExecutionState, error) {
	if rep.Expansions > 0 {
		w.cfg.Logger.Info("expand_context used", "phase", ps.Index+1, "attempt", ps.Attempt, "calls", rep.Expansions)
	}
	c := w.sessionUsage(ctx, s, agent.RoleDeveloper, rep.Usage, rep.Expansions)
	c, err := w.writeStoryRecord(c, sess, rep)
	if err != nil {
		return s, err
	}
	sid := rep.SessionID
	if sid == "" {
		sid = soleSessionID(s, ps)
	}
	lane.SessionID, lane.Status, lane.Error, lane.Usage = sid, state.LaneDone, "", lane.Usage.Add(rep.Usage)
	ps.Status, ps.Error, ps.ErrorKind = state.PhaseRunning, "", ""
	if err := w.checkGitSettings(ctx, c, ps); err != nil {
		return s, err
	}
	if ps, err = w.recordWritten(ctx, c, ps); err != nil {
		return s, err
	}
	if rep.Status == agent.StatusFailed {
		ps.Error = agentFailure(rep)
		lane.Status, lane.Error = state.LaneFailed, ps.Error
	} else if tasks, err := c.Plan.PhaseTasks(ps.Index); err == nil {
		if ps.Error = checkDeclared(ctx, c, ps, tasks, slices.Sorted(maps.Keys(ps.Written))); ps.Error != "" {
			lane.Status, lane.Error = state.LaneFailed, ps.Error
		}
	}
	return c.WithPhaseState(withSoleLane(ps, lane))
}

// nextTask writes the summary of the phase just committed and prepares the
// next phase (seed 001's next_task_node: a fresh session, review iteration
// 0). The summary stays untracked until the next phase's commit takes it;
// on a shared remote the state keeps its text until then
// (writePendingSummary).
func (w *workflow) nextTask(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	ps, ok := current(s)
	if !ok {
		return s, ErrNoPhase
	}
	if ps.Status == state.PhaseSkipped {
		return w.skipped(ctx, s, ps)
	}
	c, sofar, err := w.storySoFar(ctx, s, ps.Index)
	if err != nil {
		return s, err
	}
	ps, err = w.writeSummary(ctx, c, ps, sofar, true)
	if err != nil {
		return s, err
	}
	c, err = c.WithPhaseState(ps)
	if err != nil {
		return s, err
	}
	return w.preparePhase(ctx, c, ps.Index+1)
}

// ensureAtPreCommit resets the work tree to the pre-phase commit, keeping
// the user's untracked files and the execution directory, unless it is
// already there and clean. It refuses (HeadMovedError) when HEAD moved in
// a way the run did not (see resettable).
func (w *workflow) ensureAtPreCommit(ctx context.Context, s state.ExecutionState, ps state.PhaseState) error {
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	head, err := w.resettable(ctx, s, ps)
	if err != nil {
		return err
	}
	if _, ok := w.take(s, noteClean, ps, head); ok && head == ps.PreCommit {
		return nil // preparePhase just found it clean (notes.go)
	}
	if head == ps.PreCommit {
		st, err := repo.StatusOutside(ctx, keepList(s, ps)) // dirty ignores them anyway
		if err != nil {
			return fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
		}
		if !dirty(st, keepList(s, ps)) {
			return nil
		}
	}
	var ref, h string
	if last, ok := w.ran.Load(s.Run.ID); !ok || last != ps.Index {
		if ref, h, err = rescue(ctx, repo, w.cfg.Clock(), !w.cfg.ReproducibleDates, s, ps, keepList(s, ps)); err != nil {
			return err
		}
	}
	if err := w.gitOp(repo, func() error { return repo.ResetTo(ctx, ps.PreCommit, keepList(s, ps)) }); err != nil {
		return fmt.Errorf("nodes: phase %d: reset to %s: %w", ps.Index+1, short(ps.PreCommit), err)
	}
	if h != "" {
		w.cfg.Notice(RescueNotice(ps.Index+1, ref, h))
	}
	return nil
}

// rescue records, before a reset of phase ps discards them, the work
// tree's changes outside keep: a killed agent's unfinished work, but also
// whatever the user changed while the run waited or was stopped, which
// nothing else can tell apart. They are kept by a ref under
// workspace.RescueRefPrefix (RUN/pN-aA-TIME); the ref and the commit's hash
// are returned ("" when the tree had nothing to lose), so a reset never
// loses anything. Its commits are dated now, when the changes were found
// (with dated false, for reproducible dates, one second after HEAD).
func rescue(ctx context.Context, repo *workspace.Repo, now time.Time, dated bool, s state.ExecutionState, ps state.PhaseState, keep []string) (ref, hash string, err error) {
	name := fmt.Sprintf("%s/p%d-a%d-%s", s.Run.ID, ps.Index+1, ps.Attempt, now.UTC().Format("20060102T150405.000000000Z"))
	known := ""
	if s.Stash.Pending() {
		known = s.Stash.Commit // --allow-dirty's stash holds the user's changes before phase 1
	}
	when := now
	if !dated {
		when = time.Time{}
	}
	h, err := repo.Rescue(ctx, name, keep, known, when)
	if err != nil {
		return "", "", fmt.Errorf("nodes: phase %d: keep the work tree's changes before the reset: %w", ps.Index+1, err)
	}
	return workspace.RescueRefPrefix + name, h, nil
}

// RescueNotice is the line that tells the user where the changes a reset
// of phase (1-based) found in the work tree went. The command it gives
// names the ref, not the short hash: git takes an all-digit hash (one in
// about a hundred) for the index of a stash entry.
func RescueNotice(phase int, ref, hash string) string {
	return fmt.Sprintf("phase %d went back to its pre-phase commit; the changes it found in the work tree "+
		"(an interrupted session's, or yours) are kept in commit %s (%s): `git stash apply %s` puts them back",
		phase, short(hash), ref, ref)
}

// maxOwnCommits bounds the walk back from HEAD to the pre-phase commit:
// a phase makes at most two commits of its own (the phase's and the
// record), so a longer way back is not the run's.
const maxOwnCommits = 8

// resettable returns HEAD when a reset of phase ps to its pre-phase commit
// would only undo the run's own work: HEAD is the pre-phase commit (only
// the tree may be dirty), or every commit from HEAD back to the pre-phase
// commit (following single parents) carries this run's Gaffer-Run
// trailer. Anything else — a commit of the user's, another branch checked
// out, a fork of an older checkpoint whose branch went on — is refused
// with a *HeadMovedError, and nothing is changed.
func (w *workflow) resettable(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (string, error) {
	repo, err := w.repo(s)
	if err != nil {
		return "", err
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return "", fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
	}
	if head == ps.PreCommit {
		return head, nil
	}
	own := workspace.HasTrailers(workspace.Trailer{Key: TrailerRun, Value: s.Run.ID})
	every := func(string, []workspace.Trailer) bool { return true }
	cur := head
	for range maxOwnCommits {
		if _, ok, err := repo.FindCommit(ctx, cur, own, 1); err != nil {
			return "", fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
		} else if !ok {
			break
		}
		parent, ok, err := repo.FindCommit(ctx, cur+"~1", every, 1)
		if err != nil && !errors.Is(err, workspace.ErrUnknownRevision) {
			return "", fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
		}
		if err != nil || !ok {
			break
		}
		if parent == ps.PreCommit {
			return head, nil
		}
		cur = parent
	}
	return "", &HeadMovedError{Phase: ps.Index + 1, Head: head, PreCommit: ps.PreCommit}
}

// keepList is what a reset within a run keeps: the user's untracked files
// and the execution directory.
func keepList(s state.ExecutionState, ps state.PhaseState) []string {
	return append(append([]string(nil), ps.Untracked...), s.Run.ExecDir)
}

// dirty reports whether st has changes outside keep.
func dirty(st workspace.Status, keep []string) bool {
	for _, l := range [][]string{st.Modified, st.Added, st.Deleted, st.Untracked} {
		for _, p := range l {
			if !under(p, keep) {
				return true
			}
		}
	}
	return false
}

// under reports whether p is one of roots or inside one of them.
func under(p string, roots []string) bool {
	for _, r := range roots {
		r = strings.TrimSuffix(r, "/")
		if p == r || strings.HasPrefix(p, r+"/") || strings.TrimSuffix(p, "/") == r {
			return true
		}
	}
	return false
}

// inputsIn returns the run's inputs that are in untracked.
func inputsIn(untracked, inputs []string) []string {
	var out []string
	for _, p := range untracked {
		if !strings.HasSuffix(p, "/") && under(p, inputs) {
			out = append(out, p)
		}
	}
	return out
}

// outside returns the paths that are not under dir.
func outside(paths []string, dir string) []string {
	var out []string
	for _, p := range paths {
		if !under(p, []string{dir}) {
			out = append(out, p)
		}
	}
	return out
}

func setTasks(ps *state.PhaseState, st state.PhaseStatus) {
	for i := range ps.Tasks {
		ps.Tasks[i].Status, ps.Tasks[i].Attempt = st, ps.Attempt
	}
}

// phaseTrailers are the trailers of phase ps's commit in this run.
func phaseTrailers(s state.ExecutionState, ps state.PhaseState) []workspace.Trailer {
	return []workspace.Trailer{
		{Key: TrailerRun, Value: s.Run.ID},
		{Key: TrailerPhase, Value: strconv.Itoa(ps.Index + 1)},
		{Key: TrailerAttempt, Value: strconv.Itoa(ps.Attempt)},
	}
}

func recordTrailers(s state.ExecutionState) []workspace.Trailer {
	return []workspace.Trailer{{Key: TrailerRun, Value: s.Run.ID}, {Key: TrailerRecord, Value: "final"}}
}

// find returns the commit with the trailers among HEAD and its parent.
func (w *workflow) find(ctx context.Context, s state.ExecutionState, trailers []workspace.Trailer) (string, bool, error) {
	repo, err := w.repo(s)
	if err != nil {
		return "", false, err
	}
	h, ok, err := repo.FindCommit(ctx, "HEAD", workspace.HasTrailers(trailers...), 2)
	if err != nil {
		return "", false, fmt.Errorf("nodes: look for commit: %w", err)
	}
	return h, ok, nil
}

// commit commits the work tree (minus the user's untracked files) with the
// trailers, unless HEAD already is that commit: then it is adopted. The
// commit is dated now (Config.Clock); with Config.ReproducibleDates it is
// dated its parent's time plus one second, so the same work on the same
// repository gives the same commit.
func (w *workflow) commit(ctx context.Context, s state.ExecutionState, subject string, trailers []workspace.Trailer, exclude []string) (string, error) {
	return w.commitChecked(ctx, s, subject, trailers, exclude, nil)
}

// commitChecked is commit with check given the commit's files before it
// is made (workspace.CommitOptions.Check); an error of check stops it.
func (w *workflow) commitChecked(ctx context.Context, s state.ExecutionState, subject string, trailers []workspace.Trailer, exclude []string,
	check func(changed []string, file, head func(string) string) error) (string, error) {
	repo, err := w.repo(s)
	if err != nil {
		return "", err
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return "", fmt.Errorf("nodes: commit: %w", err)
	}
	if h, ok, err := repo.FindCommit(ctx, head, workspace.HasTrailers(trailers...), 1); err != nil {
		return "", fmt.Errorf("nodes: commit: %w", err)
	} else if ok {
		return h, nil
	}
	when, err := w.commitDate(ctx, repo)
	if err != nil {
		return "", err
	}
	if w.publishes(s) {
		trailers = append(slices.Clone(trailers), workspace.Trailer{Key: TrailerLease, Value: strconv.FormatUint(graph.LeaseToken(ctx), 10)})
	}
	var h string
	phase := 0
	if ps, ok := current(s); ok {
		phase = ps.Index + 1
	}
	err = w.gitWork(ctx, phase, 0, events.GitCommit, func() error {
		return w.gitOp(repo, func() (err error) {
			h, err = repo.Commit(ctx, subject, trailers, workspace.CommitOptions{When: when, Exclude: exclude, AllowEmpty: true, Check: check})
			return err
		})
	})
	var oe *OutsideEditsError
	if errors.As(err, &oe) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("nodes: commit %q: %w", subject, err)
	}
	if w.cfg.AfterCommit != nil {
		w.cfg.AfterCommit(subject)
	}
	return h, nil
}

// commitDate is the date of the next commit: now, or with
// ReproducibleDates its parent's date plus one second.
func (w *workflow) commitDate(ctx context.Context, repo *workspace.Repo) (time.Time, error) {
	if !w.cfg.ReproducibleDates {
		return w.cfg.Clock(), nil
	}
	log, err := repo.Log(ctx, 1)
	if err != nil {
		return time.Time{}, fmt.Errorf("nodes: commit: %w", err)
	}
	if len(log) == 0 {
		return time.Unix(1, 0).UTC(), nil
	}
	return log[0].When.Add(time.Second), nil
}

// phaseSubject is the subject line of a phase's commit.
func phaseSubject(s state.ExecutionState, ps state.PhaseState) string {
	tasks, _ := s.Plan.PhaseTasks(ps.Index)
	var titles []string
	for _, t := range tasks {
		titles = append(titles, t.Title)
	}
	return fmt.Sprintf("phase %d: %s", ps.Index+1, strings.Join(titles, "; "))
}

func short(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// publish pushes commit, the run's new tip, to its branch on the shared
// remote if the branch there is at old (Config.Publish); without a
// remote it does nothing. It runs before the checkpoint that records
// commit, so a checkpoint that records a commit records a pushed one.
func (w *workflow) publish(ctx context.Context, s state.ExecutionState, commit, old string) error {
	if !w.publishes(s) {
		return nil
	}
	if err := w.cfg.Publish(ctx, s, commit, old); err != nil {
		return fmt.Errorf("nodes: push %s: %w", short(commit), err)
	}
	if w.cfg.AfterPublish != nil {
		w.cfg.AfterPublish(commit)
	}
	return nil
}

// publishes reports whether run s's commits go to a shared remote: a run
// in its own work tree, with Config.Publish.
func (w *workflow) publishes(s state.ExecutionState) bool {
	return w.cfg.Publish != nil && s.Run.WorkTree != ""
}
