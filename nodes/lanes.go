package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
	"github.com/gaffer-dev/gaffer/workspace"
)

// A phase of several lanes (state.GroupLanes) runs them as the runtime's
// own fan-out:
//
//	phased_execution ─► lane × N (graph.Send, at most parallel at once) ─► combine ─┬─► review
//	  (dispatch)                                                                   └─► phased_execution (a conflict)
//
// phased_execution marks the lanes that are due running and records each
// one's work tree, before any starts; its router sends one branch per due
// lane to the lane node, whose result is saved as a pending write the
// moment it finishes, so a finished lane never runs again after a crash.
// A lane runs a fresh developer session in its own work tree made from
// its base, commits what the session did there (trailers Gaffer-Run,
// Gaffer-Phase, Gaffer-Lane, Gaffer-Attempt) and keeps the commit by a
// ref; run again after a crash between that commit and its pending write,
// it finds the commit and adopts it. Merge puts the branches' lanes into
// the run's state. combine merges the lanes' commits onto the phase's
// base without a work tree (workspace.Combine): a lane whose work
// conflicts with the others' runs again, alone, from their combined work,
// with the conflict named in its prompt (a retry of the lane, not a
// failed attempt); when all merge, the combined tree is put into the
// run's tree as uncommitted changes, and review judges and commits the
// phase as one, as a phase of one lane.

// The lanes' node names.
const (
	NodeLane    = "lane"
	NodeCombine = "combine"
)

// TrailerLane names the lane (its tasks, "2a+2b") of a lane's commit.
const TrailerLane = "Gaffer-Lane"

// LanesLine is the line that tells, as run s starts, how its phases'
// independent tasks run: at once, up to its parallel, each lane in a
// private work tree, their work combined as the phase's one commit into
// the run's work tree or, in place, into this checkout.
func LanesLine(s state.ExecutionState) string {
	n := state.ParallelOf(s.Config)
	at := fmt.Sprintf("up to %d at once", n)
	if n == 1 {
		at = "one after another (--parallel 1)"
	}
	into := "the run's work tree"
	if s.Run.WorkTree == "" {
		into = "this checkout"
	}
	return fmt.Sprintf("A phase's independent tasks run as lanes, %s, each a fresh session in a private work tree under .git/%s; "+
		"their work is combined into %s as the phase's one commit.", at, workspace.LaneTreesDir, into)
}

// soleLane is the lane of a phase of one lane, which works in the run's
// tree: its first (and only) lane, or a new one of all the phase's
// tasks when it has none yet.
func soleLane(s state.ExecutionState, ps state.PhaseState) state.LaneProgress {
	if len(ps.Lanes) > 0 {
		return ps.Lanes[0].Clone()
	}
	var tasks []string
	if ps.Index >= 0 && ps.Index < len(s.Plan.Phases) {
		tasks = slices.Clone(s.Plan.Phases[ps.Index].TaskIDs)
	}
	return state.LaneProgress{Tasks: tasks, Attempt: ps.Attempt, Base: ps.PreCommit}
}

// withSoleLane returns ps with l as its one lane.
func withSoleLane(ps state.PhaseState, l state.LaneProgress) state.PhaseState {
	ps.Lanes = []state.LaneProgress{l}
	return ps
}

// laneTree is the work tree of lane k (0-based) of phase ps: under the
// repository's lane trees, by run, phase and lane. It is the same path
// each time the lane runs, as an agent CLI that continues a session wants
// (Claude Code's --resume finds a conversation by its directory).
func laneTree(repo *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int) string {
	return filepath.Join(repo.LaneTrees(), s.Run.ID, fmt.Sprintf("p%d-l%d", ps.Index+1, k+1))
}

// laneRef keeps lane k's commit of phase ps until the phase is committed.
func laneRef(s state.ExecutionState, ps state.PhaseState, k int) string {
	return fmt.Sprintf("%s%s/p%d/%d", workspace.LaneRefPrefix, s.Run.ID, ps.Index+1, k+1)
}

// laneTrailers are the trailers of lane l's commit.
func laneTrailers(s state.ExecutionState, ps state.PhaseState, l state.LaneProgress) []workspace.Trailer {
	return []workspace.Trailer{
		{Key: TrailerRun, Value: s.Run.ID},
		{Key: TrailerPhase, Value: strconv.Itoa(ps.Index + 1)},
		{Key: TrailerLane, Value: l.Label()},
		{Key: TrailerAttempt, Value: strconv.Itoa(l.Attempt)},
	}
}

// dispatch starts the due lanes of a phase of several: the execution
// directory's files are written (plan.md, a retry's review-feedback.md),
// and each pending lane is marked running with its base and the work
// tree it will have, in this step's checkpoint, before any lane starts.
// RouteAfterPhaseSends sends them; combine follows.
func (w *workflow) dispatch(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	if ps.HasSession() && ps.Written != nil {
		// A retry: the run's tree holds the previous attempt's combined
		// work, which goes as a rejected session's does; a tree that is
		// not as that combine left it is kept by a rescue ref first.
		switch err := w.checkOutsideEdits(ctx, s, ps); {
		case err == nil:
			w.ran.Store(s.Run.ID, ps.Index)
		case errors.Is(err, ErrOutsideEdits):
			w.ran.Delete(s.Run.ID)
		default:
			return s, err
		}
	}
	// As a phase of one lane's fresh session: the run's tree is at the
	// pre-phase commit, where the lanes' work is combined (with
	// --allow-dirty in place, the user's changes are in their stash).
	if err := w.ensureAtPreCommit(ctx, s, ps); err != nil {
		return s, err
	}
	// The lanes work elsewhere: whatever the run's tree holds at combine
	// is not this process's work, and a reset there keeps it first.
	w.ran.Delete(s.Run.ID)
	ps.Written = nil // combine records what this attempt's lanes leave
	if err := w.cleanTemps(s); err != nil {
		return s, err
	}
	if err := w.writePhaseFiles(s, ps); err != nil {
		return s, err
	}
	now := w.cfg.Clock().UTC()
	ps.Lanes = slices.Clone(ps.Lanes)
	for k := range ps.Lanes {
		l := ps.Lanes[k].Clone()
		if l.Status != state.LanePending {
			continue
		}
		if l.Base == "" {
			l.Base = ps.PreCommit
		}
		l.Status, l.StartedAt, l.CompletedAt, l.Head = state.LaneRunning, now, time.Time{}, ""
		l.WorkTree = laneTree(repo, s, ps, k)
		ps.Lanes[k] = l
	}
	ps.Status, ps.Error, ps.ErrorKind = state.PhaseRunning, "", ""
	return s.WithPhaseState(ps)
}

// RouteAfterPhaseSends routes a phase of several lanes from its dispatch:
// one branch (graph.Send) per running lane, its input the run's state
// with Progress.Lane naming it; combine when none is running. Anything
// else (a phase of one lane, a stop) goes as RouteAfterPhase says.
func RouteAfterPhaseSends(_ context.Context, s state.ExecutionState) (graph.Routes[state.ExecutionState], error) {
	ps, ok := current(s)
	if s.Status.Terminal() || !ok || !ps.Parallel() || recoveryStage(s) == stageAsk {
		return graph.Routes[state.ExecutionState]{Nodes: []string{RouteAfterPhase(s)}}, nil
	}
	var r graph.Routes[state.ExecutionState]
	for k, l := range ps.Lanes {
		if l.Status == state.LaneRunning {
			in := s
			in.Progress.Lane = k + 1
			r.Sends = append(r.Sends, graph.Send[state.ExecutionState]{Node: NodeLane, Input: in})
		}
	}
	if len(r.Sends) == 0 {
		r.Nodes = []string{NodeCombine}
	}
	return r, nil
}

// lane runs one lane of the current phase (the send's Progress.Lane): at
// most the run's parallel lanes at once, a fresh developer session in
// the lane's own work tree, its work committed there and kept by its ref.
// It returns only the lane (laneResult), which Merge puts into the run's
// state. A lane whose commit a crash left (at its ref, or its tree's
// HEAD) adopts it and runs no session. An error is the node's (the run
// stops for resume); an agent's failure is the lane's.
func (w *workflow) lane(ctx context.Context, s state.ExecutionState) (_ state.ExecutionState, rerr error) {
	ps, ok := current(s)
	k := s.Progress.Lane - 1
	if !ok || k < 0 || k >= len(ps.Lanes) {
		return s, fmt.Errorf("%w: lane %d of the current phase", ErrNoPhase, k+1)
	}
	l := ps.Lanes[k].Clone()
	release, err := w.gate(ctx, s)
	if err != nil {
		return s, err
	}
	defer release()
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	l.WorkTree = laneTree(repo, s, ps, k) // this host's: a run taken over has its lanes here
	trailers := laneTrailers(s, ps, l)
	if h, lr, ok, err := w.laneCommit(ctx, repo, s, ps, k, l, trailers); err != nil {
		return s, err
	} else if ok {
		return laneResult(s, ps, k, w.adoptedLane(l, h, lr)), w.removeLaneTree(ctx, repo, s, ps, k)
	}
	why, spent, err := w.laneBudget(s, ps, l.Label())
	if err != nil {
		return s, err
	}
	if why != "" { // no session starts: the lane fails the attempt, and the budget stop follows
		l.Status, l.Error, l.CompletedAt = state.LaneFailed, why, w.cfg.Clock().UTC()
		return laneResult(s, ps, k, l), nil
	}
	defer spent(state.Usage{}) // a lane stopped before its session ends spent nothing
	lr, err := w.laneRepo(ctx, repo, s, ps, k, l)
	if err != nil {
		return s, err
	}
	d, sess, err := w.laneSession(s, ps, k, l, lr.Root())
	if err != nil {
		return s, err
	}
	ev := events.LaneSession{RunID: s.Run.ID, Phase: sess.Phase, Lane: k + 1, Attempt: l.Attempt, Tasks: slices.Clone(l.Tasks)}
	graph.Emit(ctx, events.EventLaneStarted, ev)
	started := w.cfg.Clock()
	defer func() { w.emitLaneFinished(ctx, ev, started, l, rerr) }() // however the node ends
	rep, err := w.session(ctx, d, sess)
	spent(rep.Usage)
	if err != nil && !driverFailure(ctx, s, err) {
		return s, err
	}
	emitLaneUsage(ctx, s, sess, l, rep)
	if l, err = w.laneOutcome(s, ps, k, l, sess, rep, err); err != nil {
		return s, err
	}
	if l.Status != state.LaneFailed {
		if l, err = w.commitLaneWork(ctx, repo, lr, s, ps, k, l, trailers); err != nil {
			return s, err
		}
	}
	return laneResult(s, ps, k, l), w.removeLaneTree(ctx, repo, s, ps, k)
}

// adoptedLane is lane l done by its commit h, which a crash left before
// its pending write: the session's report (lr) is in the commit.
func (w *workflow) adoptedLane(l state.LaneProgress, h string, lr laneReport) state.LaneProgress {
	l.Head, l.Status, l.Error = h, state.LaneDone, ""
	l.SessionID, l.Usage, l.Spent, l.Record = lr.SessionID, l.Usage.Add(lr.Usage), lr.Usage, lr.Record
	l.Expansions = lr.Expansions
	l.CompletedAt = w.cfg.Clock().UTC()
	return l
}

// laneSession is the developer's driver and the session of lane k (l) of
// phase ps, in dir (the lane's work tree): the lane's prompt with the
// story so far, its tasks, continuing its session when it has one.
func (w *workflow) laneSession(s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress, dir string) (agent.Driver, agent.Session, error) {
	sc, err := w.phaseStory(s, ps)
	if err != nil {
		return nil, agent.Session{}, err
	}
	prompt, err := LanePrompt(s, ps, k, sc)
	if err != nil {
		return nil, agent.Session{}, err
	}
	d, err := w.driver(agent.RoleDeveloper, s.Config)
	if err != nil {
		return nil, agent.Session{}, err
	}
	return d, agent.Session{
		Role: agent.RoleDeveloper, RunID: s.Run.ID, Phase: ps.Index + 1, Attempt: l.Attempt,
		Iteration: l.Iteration + 1, Prompt: prompt, Dir: dir, Tasks: slices.Clone(l.Tasks), Lane: k + 1,
		SessionID: l.SessionID, Tools: agent.DefaultTools(agent.RoleDeveloper),
		StoryDir: storyDir(s), Model: escalatedModel(s, ps),
	}, nil
}

// emitLaneFinished emits lane_finished for the lane session ev, started
// at started: stopped when the node failed (rerr), else as lane l ended.
func (w *workflow) emitLaneFinished(ctx context.Context, ev events.LaneSession, started time.Time, l state.LaneProgress, rerr error) {
	ev.Duration = w.cfg.Clock().Sub(started)
	switch {
	case rerr != nil:
		ev.Status, ev.Error = events.LaneStopped, rerr.Error()
	case l.Status == state.LaneDone:
		ev.Status = events.LaneDone
	default:
		ev.Status, ev.Error = events.LaneFailed, l.Error
	}
	graph.Emit(ctx, events.EventLaneFinished, ev)
}

// emitLaneUsage emits the usage of lane l's session sess (its report
// rep), which Merge adds to the run's.
func emitLaneUsage(ctx context.Context, s state.ExecutionState, sess agent.Session, l state.LaneProgress, rep agent.Report) {
	graph.Emit(ctx, events.EventAgentUsage, events.AgentUsage{
		Role: string(agent.RoleDeveloper), Model: modelOf(s.Config, agent.RoleDeveloper),
		InputTokens: rep.Usage.InputTokens, OutputTokens: rep.Usage.OutputTokens,
		CachedTokens: rep.Usage.CachedTokens, CostUSD: rep.Usage.CostUSD,
		Phase: sess.Phase, Lane: sess.Lane, Tasks: slices.Clone(l.Tasks), Expansions: max(rep.Expansions, 0),
	})
}

// laneOutcome is lane k (l) of phase ps after its session sess: its
// usage, session id, end and decision record (laneRecord); failed when
// the driver could not run the session (sessErr, with recovery on: the
// phase's attempt fails with the driver's error) or the agent reported
// failure.
func (w *workflow) laneOutcome(s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress, sess agent.Session, rep agent.Report, sessErr error) (state.LaneProgress, error) {
	if rep.Expansions > 0 {
		w.cfg.Logger.Info("expand_context used", "phase", sess.Phase, "lane", k+1, "attempt", l.Attempt, "calls", rep.Expansions)
	}
	l.Usage, l.Spent, l.Expansions = l.Usage.Add(rep.Usage), rep.Usage, max(rep.Expansions, 0)
	l.SessionID = rep.SessionID
	if l.SessionID == "" {
		l.SessionID = fmt.Sprintf("%s-p%d-l%d-a%d", s.Run.ID, ps.Index+1, k+1, l.Attempt)
	}
	l.CompletedAt = w.cfg.Clock().UTC()
	switch {
	case sessErr != nil:
		l.Status, l.Error = state.LaneFailed, sessErr.Error()
	case rep.Status == agent.StatusFailed:
		l.Status, l.Error = state.LaneFailed, agentFailure(rep)
	}
	rec, err := laneRecord(sess, rep)
	if err != nil {
		return l, err
	}
	if rec != nil {
		l.Record = rec
	}
	return l, nil
}

// agentFailure is the error of a session whose agent reported failure.
func agentFailure(rep agent.Report) string {
	if rep.Error == "" {
		return "the agent reported failure without saying why"
	}
	return rep.Error
}

// laneRecord is the decision record lane session sess left (its report
// rep), for combine to number and write; nil when it left none. A
// summary alone is a record too (writeStoryRecord).
func laneRecord(sess agent.Session, rep agent.Report) (json.RawMessage, error) {
	if rep.Story.IsZero() && strings.TrimSpace(rep.Summary) == "" {
		return nil, nil
	}
	r := story.Record{Role: string(agent.RoleDeveloper), Phase: sess.Phase, Attempt: sess.Attempt,
		Iteration: sess.Iteration, Summary: rep.Summary, Facts: rep.Story}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("nodes: story: %w", err)
	}
	return b, nil
}

// commitLaneWork commits the work of lane k (l), whose session did not
// fail, in its tree lr (commitLane), once the git settings are checked;
// the lane is done at that commit, or failed when, under strict_files,
// its changes differ from its own tasks' declared files
// (checkLaneDeclared: it runs again on its work, retryLanes).
func (w *workflow) commitLaneWork(ctx context.Context, repo, lr *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress, trailers []workspace.Trailer) (state.LaneProgress, error) {
	if err := w.checkGitSettings(ctx, s, ps); err != nil {
		return l, err
	}
	h, err := w.commitLane(ctx, repo, lr, s, ps, k, l, trailers)
	if err != nil {
		return l, err
	}
	l.Head, l.Status, l.Error = h, state.LaneDone, ""
	if e, err := w.checkLaneDeclared(ctx, repo, s, ps, k, l); err != nil {
		return l, err
	} else if e != "" {
		l.Status, l.Error = state.LaneFailed, e
	}
	return l, nil
}

// laneResult is what a lane's branch returns: the run's id and status,
// and its phase's state holding the lane alone, Progress.Lane naming it.
// Merge takes nothing else from it, so its pending write is the lane's
// size, not the plan's.
func laneResult(s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress) state.ExecutionState {
	return state.ExecutionState{Run: state.RunInfo{ID: s.Run.ID}, Status: s.Status,
		Progress: state.Progress{Lane: k + 1, Phases: []state.PhaseState{{Index: ps.Index, Lanes: []state.LaneProgress{l}}}}}
}

// Merge is the workflow's graph.MergeFunc (pass it to Compile with
// graph.WithMerge): it puts each lane branch's lane, in branch order,
// into the current phase of base, and adds the usage of each lane's
// latest session to the developer's (and its story expansions to the
// run's count). It fails on a branch that is not a
// lane's of base's current phase.
func Merge(_ context.Context, base state.ExecutionState, branches []state.ExecutionState) (state.ExecutionState, error) {
	i := base.Progress.CurrentPhase()
	ps, err := base.PhaseState(i)
	if err != nil {
		return base, fmt.Errorf("nodes: merge the lanes: %w", err)
	}
	var spent state.Usage
	expansions := 0
	for _, b := range branches {
		k := b.Progress.Lane - 1
		if k < 0 || k >= len(ps.Lanes) || len(b.Progress.Phases) != 1 || b.Progress.Phases[0].Index != i || len(b.Progress.Phases[0].Lanes) != 1 {
			return base, fmt.Errorf("nodes: merge the lanes: a branch that is no lane of phase %d (lane %d)", i+1, k+1)
		}
		l := b.Progress.Phases[0].Lanes[0].Clone()
		spent = spent.Add(l.Spent)
		expansions += l.Expansions
		ps.Lanes[k] = l
	}
	c, err := base.WithPhaseState(ps)
	if err != nil {
		return base, err
	}
	if !spent.IsZero() {
		c = c.WithUsage(string(agent.RoleDeveloper), spent)
	}
	c.Progress.Story.Expansions += expansions
	c.Progress.Lane = 0
	return c, nil
}

// laneReport is what a lane's commit says of the session that made it,
// on one line of its message: the session's id and usage and its decision
// record, which a lane run again after a crash between the commit and
// its pending write takes from there.
type laneReport struct {
	SessionID string          `json:"session_id,omitempty"`
	Usage     state.Usage     `json:"usage,omitzero"`
	Record    json.RawMessage `json:"record,omitempty"`
	// Expansions is the session's expansions of earlier phases' records.
	Expansions int `json:"expansions,omitempty"`
}

// laneReportKey begins the line of a lane commit's message that holds
// its laneReport.
const laneReportKey = `{"lane_report":`

// laneCommit finds lane l's commit made before a crash: at its ref, or
// at its work tree's HEAD, with its trailers and its base as parent; and
// the report its message holds.
func (w *workflow) laneCommit(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress, trailers []workspace.Trailer) (string, laneReport, bool, error) {
	var msg string
	has := workspace.HasTrailers(trailers...)
	own := func(m string, t []workspace.Trailer) bool {
		if has(m, t) {
			msg = m
			return true
		}
		return false
	}
	for _, rev := range []string{laneRef(s, ps, k), ""} {
		r := repo
		if rev == "" {
			if l.WorkTree == "" {
				continue
			}
			tree := laneTree(repo, s, ps, k)
			if _, err := os.Stat(filepath.Join(tree, ".git")); err != nil {
				continue
			}
			var err error
			if r, err = workspace.Open(tree); err != nil {
				continue // half made: made again
			}
			rev = "HEAD"
		}
		h, ok, err := r.FindCommit(ctx, rev, own, 1)
		if err != nil && !errors.Is(err, workspace.ErrUnknownRevision) {
			return "", laneReport{}, false, fmt.Errorf("nodes: lane %d of phase %d: %w", k+1, ps.Index+1, err)
		}
		if err != nil || !ok {
			continue
		}
		if parent, ok, err := r.FindCommit(ctx, h+"~1", func(string, []workspace.Trailer) bool { return true }, 1); err != nil || !ok || parent != l.Base {
			continue
		}
		if rev == "HEAD" {
			if err := setLaneRef(ctx, repo, laneRef(s, ps, k), h); err != nil {
				return "", laneReport{}, false, fmt.Errorf("nodes: lane %d of phase %d: %w", k+1, ps.Index+1, err)
			}
		}
		var lr laneReport
		for line := range strings.Lines(msg) {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), laneReportKey); ok {
				var v struct {
					R laneReport `json:"lane_report"`
				}
				if json.Unmarshal([]byte(laneReportKey+rest), &v) == nil {
					lr = v.R
				}
				break
			}
		}
		return h, lr, true, nil
	}
	return "", laneReport{}, false, nil
}

// laneRepo makes lane l's work tree afresh at its base (what a killed
// session left there goes), with the run's execution directory and
// inputs copied in: the plan and story the prompt points at, a .env the
// tests need. The lane's commit leaves them out.
func (w *workflow) laneRepo(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress) (*workspace.Repo, error) {
	var lr *workspace.Repo
	err := w.gitWork(ctx, ps.Index+1, k+1, events.GitWorktree, func() (err error) {
		lr, err = repo.AddLaneTree(ctx, laneTree(repo, s, ps, k), l.Base)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nodes: phase %d: lane %s: %w", ps.Index+1, l.Label(), err)
	}
	files, err := workspace.LaneFiles(repo.Root(), s.Run.ExecDir)
	if err != nil {
		return nil, fmt.Errorf("nodes: phase %d: lane %s: %w", ps.Index+1, l.Label(), err)
	}
	if err := workspace.CopyFiles(repo.Root(), lr.Root(), append(files, s.Config.Inputs...)); err != nil {
		return nil, fmt.Errorf("nodes: phase %d: lane %s: copy the execution directory: %w", ps.Index+1, l.Label(), err)
	}
	return lr, nil
}

// commitLane commits what lane l's session did in its tree, all but the
// execution directory and the run's inputs, with the lane's trailers, and
// keeps the commit by the lane's ref.
func (w *workflow) commitLane(ctx context.Context, repo, lr *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress, trailers []workspace.Trailer) (string, error) {
	when, err := w.commitDate(ctx, lr)
	if err != nil {
		return "", err
	}
	report, err := json.Marshal(struct {
		R laneReport `json:"lane_report"`
	}{laneReport{SessionID: l.SessionID, Usage: l.Spent, Record: l.Record, Expansions: l.Expansions}})
	if err != nil {
		return "", fmt.Errorf("nodes: lane %d of phase %d: %w", k+1, ps.Index+1, err)
	}
	subject := fmt.Sprintf("lane %d of phase %d: %s\n\n%s", k+1, ps.Index+1, l.Label(), report)
	exclude := append([]string{s.Run.ExecDir}, s.Config.Inputs...)
	var h string
	err = w.gitWork(ctx, ps.Index+1, k+1, events.GitCommit, func() error {
		return w.gitOp(lr, func() (err error) {
			h, err = lr.Commit(ctx, subject, trailers, workspace.CommitOptions{When: when, Exclude: exclude, AllowEmpty: true})
			return err
		})
	})
	if err != nil {
		return "", fmt.Errorf("nodes: commit lane %d of phase %d: %w", k+1, ps.Index+1, err)
	}
	if err := setLaneRef(ctx, repo, laneRef(s, ps, k), h); err != nil {
		return "", fmt.Errorf("nodes: lane %d of phase %d: %w", k+1, ps.Index+1, err)
	}
	if w.cfg.AfterCommit != nil {
		w.hookMu.Lock() // lanes commit at once; the hook is called one at a time
		w.cfg.AfterCommit(fmt.Sprintf("lane %d of phase %d: %s", k+1, ps.Index+1, l.Label()))
		w.hookMu.Unlock()
	}
	return h, nil
}

// setLaneRef points a lane's ref at its commit. The ref is the run's own:
// only the process that holds the run's lease sets it, each lane its own,
// so a lock file on it is what a killed process left, and goes first.
func setLaneRef(ctx context.Context, repo *workspace.Repo, ref, commit string) error {
	if err := repo.ClearRefLock(ref); err != nil {
		return err
	}
	return repo.SetRef(ctx, ref, commit)
}

// removeLaneTree removes lane k's work tree: its work is in its commit.
// The tree is the one this process's repository has for the lane
// (laneTree), never the path the state recorded: a run taken over by
// another host has its lanes' trees in that host's clone, and a stored
// path is no licence to remove anything.
func (w *workflow) removeLaneTree(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int) error {
	l := ps.Lanes[k]
	if l.WorkTree == "" {
		return nil
	}
	if err := repo.RemoveLaneTree(ctx, laneTree(repo, s, ps, k)); err != nil {
		return fmt.Errorf("nodes: lane %s: %w", l.Label(), err)
	}
	return nil
}

// combine follows a phase's lanes. It writes the lanes' decision records
// (numbered in lane order: the Task Story's order does not depend on
// which lane finished first); a lane that failed fails the attempt (its
// error is the phase's, and review rejects it); otherwise it merges the
// lanes' commits onto the phase's base (workspace.Combine). A lane that
// conflicts with the lanes merged before it is due again, alone, from
// their combined work, its attempt one higher and the paths in its
// prompt: RouteAfterCombine sends it back to phased_execution. When every
// lane merged, the combined tree is put into the run's tree as
// uncommitted changes (workspace.ApplyTree; a tree changed meanwhile is
// reset to the base first, its changes kept by a rescue ref), which
// ps.Written records, and review follows.
func (w *workflow) combine(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	ps, ok := current(s)
	if !ok {
		return s, ErrNoPhase
	}
	w.spends.Delete(laneSpendKey(s, ps)) // the lanes' usage is in s now
	c, ps, err := w.writeLaneRecords(s, ps)
	if err != nil {
		return s, err
	}
	ps.Lanes = slices.Clone(ps.Lanes)
	var failed []string
	for _, l := range ps.Lanes {
		if l.Status == state.LaneFailed {
			failed = append(failed, fmt.Sprintf("Lane %s (task %s):\n%s", l.Label(), strings.Join(l.Tasks, ", "), l.Error))
		}
	}
	if len(failed) > 0 {
		ps.Status, ps.Error = state.PhaseRunning, strings.Join(failed, "\n\n")
		return c.WithPhaseState(ps)
	}
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	heads := make([]string, len(ps.Lanes))
	for k, l := range ps.Lanes {
		heads[k] = l.Head
	}
	var cmb workspace.Combined
	err = w.gitWork(ctx, ps.Index+1, 0, events.GitCombine, func() (err error) {
		cmb, err = repo.Combine(ctx, ps.PreCommit, heads)
		return err
	})
	if err != nil {
		return s, fmt.Errorf("nodes: phase %d: combine the lanes: %w", ps.Index+1, err)
	}
	if len(cmb.Conflicts) > 0 {
		for _, cf := range cmb.Conflicts {
			l := ps.Lanes[cf.Lane].Again(cmb.Commit)
			l.Conflict = slices.Clone(cf.Paths)
			l.Error = fmt.Sprintf("its work conflicted with the other lanes' in %s", workspace.PathList(cf.Paths, 10))
			ps.Lanes[cf.Lane] = l
		}
		return c.WithPhaseState(ps)
	}
	written, err := w.applyCombined(ctx, c, ps, cmb.Commit)
	if err != nil {
		return s, err
	}
	ps.Written, ps.Error, ps.ErrorKind = written, "", ""
	w.ran.Store(s.Run.ID, ps.Index) // a reset of this phase undoes only the lanes' work
	w.note(s, treeNote{kind: noteWritten, phase: ps.Index, attempt: ps.Attempt, iteration: ps.ReviewIteration(), head: ps.PreCommit})
	return c.WithPhaseState(ps)
}

// applyCombined puts the lanes' combined work into the run's tree, which
// is at the phase's pre-phase commit: as uncommitted changes, as a
// session of a phase of one lane leaves them. A tree that is elsewhere or
// has changes in the way is reset first (ensureAtPreCommit: changes it
// cannot account for are kept by a rescue ref).
func (w *workflow) applyCombined(ctx context.Context, s state.ExecutionState, ps state.PhaseState, commit string) (map[string]string, error) {
	repo, err := w.repo(s)
	if err != nil {
		return nil, err
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return nil, fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
	}
	ours := false // the tree changed only where the lanes' work goes (a crash mid-apply)
	if head == ps.PreCommit {
		now, _, err := w.changedPaths(ctx, s, ps)
		if err != nil {
			return nil, err
		}
		lanes, err := repo.ChangedPaths(ctx, ps.PreCommit, commit)
		if err != nil {
			return nil, fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
		}
		ours = !slices.ContainsFunc(now, func(p string) bool { _, found := slices.BinarySearch(lanes, p); return !found })
	}
	if ours {
		written, err := repo.ApplyTree(ctx, ps.PreCommit, commit)
		if err == nil {
			return written, nil
		}
		if !errors.Is(err, workspace.ErrDirty) {
			return nil, fmt.Errorf("nodes: phase %d: put the lanes' work in the tree: %w", ps.Index+1, err)
		}
	}
	if err := w.ensureAtPreCommit(ctx, s, ps); err != nil {
		return nil, err
	}
	written, err := repo.ApplyTree(ctx, ps.PreCommit, commit)
	if err != nil {
		return nil, fmt.Errorf("nodes: phase %d: put the lanes' work in the tree: %w", ps.Index+1, err)
	}
	return written, nil
}

// writeLaneRecords writes the decision records the lanes' sessions left
// (LaneProgress.Record) as the Task Story's next records, in lane order,
// and clears them from the lanes.
func (w *workflow) writeLaneRecords(s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, state.PhaseState, error) {
	c := s
	ps.Lanes = slices.Clone(ps.Lanes)
	for k, l := range ps.Lanes {
		if len(l.Record) == 0 {
			continue
		}
		var r story.Record
		if err := json.Unmarshal(l.Record, &r); err != nil {
			return s, ps, fmt.Errorf("nodes: story: lane %s: %w", l.Label(), err)
		}
		var err error
		r.Seq = c.Progress.Story.Records + 1
		if c, err = w.putStoryRecord(c, r); err != nil {
			return s, ps, err
		}
		l = l.Clone()
		l.Record = nil
		ps.Lanes[k] = l
	}
	return c, ps, nil
}

// cleanLanes removes what phase ps's lanes left once the phase is
// committed or halted: their refs and any of their work trees a crash
// left behind.
func (w *workflow) cleanLanes(ctx context.Context, s state.ExecutionState, ps state.PhaseState) error {
	if !ps.Parallel() {
		return nil
	}
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	for k := range ps.Lanes {
		if err := repo.ClearRefLock(laneRef(s, ps, k)); err != nil {
			return fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
		}
		if err := repo.DeleteRef(ctx, laneRef(s, ps, k)); err != nil {
			return fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
		}
		if err := w.removeLaneTree(ctx, repo, s, ps, k); err != nil {
			return err
		}
	}
	dir := filepath.Join(repo.LaneTrees(), s.Run.ID)
	left, _ := os.ReadDir(dir)
	prefix := fmt.Sprintf("p%d-", ps.Index+1)
	for _, e := range left {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := repo.RemoveLaneTree(ctx, filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
			}
		}
	}
	_ = os.Remove(dir) // once empty
	return nil
}

// RouteAfterLanes combines a phase's lanes.
func RouteAfterLanes(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	return NodeCombine
}

// RouteAfterCombine reviews the phase once its lanes are combined (or one
// failed), and runs the lanes due again (a conflict) first.
func RouteAfterCombine(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	if ps, ok := current(s); ok && ps.Error == "" {
		for _, l := range ps.Lanes {
			if l.Status == state.LanePending {
				return NodePhase
			}
		}
	}
	return NodeReview
}

// gate holds one of the run's parallel places until the lane is done;
// it waits, ctx permitting, while parallel lanes of the run are running.
func (w *workflow) gate(ctx context.Context, s state.ExecutionState) (func(), error) {
	v, _ := w.gates.LoadOrStore(s.Run.ID, make(chan struct{}, state.ParallelOf(s.Config)))
	g := v.(chan struct{})
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// retryLanes returns ps, whose attempt was just counted up after review
// rejected it, with the lanes to run again due: those whose tasks the
// review named (review.Tasks), or that failed; all of them when the
// review named none of their tasks. Each continues its own session (the
// review's feedback in its prompt) from its own last work, its review
// iteration one higher; the other lanes keep their work. A phase of one
// lane starts again from the pre-phase commit in a fresh session.
func retryLanes(ps state.PhaseState, review state.ReviewResult) state.PhaseState {
	if !ps.Parallel() {
		return ps.FreshLanes()
	}
	at := atFault(review)
	all := !slices.ContainsFunc(ps.Lanes, at)
	lanes := slices.Clone(ps.Lanes)
	for k, l := range lanes {
		if all || at(l) {
			base := l.Head
			if base == "" {
				base = ps.PreCommit
			}
			lanes[k] = l.Again(base)
			lanes[k].Iteration++
		}
	}
	ps.Lanes = lanes
	return ps
}

// atFault picks the lanes a rejected attempt is about: those that
// failed, and those whose tasks the review named (review.Tasks).
func atFault(review state.ReviewResult) func(state.LaneProgress) bool {
	return func(l state.LaneProgress) bool {
		if l.Status == state.LaneFailed {
			return true
		}
		for _, t := range review.Tasks {
			if slices.Contains(l.Tasks, t) {
				return true
			}
		}
		return false
	}
}

// faultLanes names the lanes of a phase of several that a rejected
// attempt is about (atFault), for recovery: none for a phase of one
// lane, or when every lane is (the phase's whole work is at fault).
func faultLanes(ps state.PhaseState, review state.ReviewResult) []laneFault {
	if !ps.Parallel() {
		return nil
	}
	var out []laneFault
	at := atFault(review)
	for k, l := range ps.Lanes {
		if at(l) {
			out = append(out, laneFault{Lane: k + 1, Tasks: slices.Clone(l.Tasks)})
		}
	}
	if len(out) == len(ps.Lanes) {
		return nil
	}
	return out
}
