package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// review judges the current phase and carries out the decision
// (DecideAfterReview):
//
//   - A phase whose commit is already at HEAD (a resume after a crash
//     between the commit and the checkpoint) is adopted: approved, no
//     reviewer is asked again.
//   - A phase whose agent reported failure is a rejected review with the
//     agent's error as the feedback; the reviewer is not asked.
//   - Otherwise the reviewer judges the uncommitted changes, and the
//     evaluator (or, without one, this node) sorts its items.
//
// Approved: plan.md and execution-state.json are written and the phase is
// committed with its trailers; after the last phase its summary and the
// final execution-state.json are committed too ("record" commit).
// Rejected: another iteration (task mode, same session) or attempt (phased
// mode, fresh session; phased_execution resets), or at the limit a reset
// to the pre-phase commit and the run halts.
func (w *workflow) review(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	ps, ok := current(s)
	if !ok {
		return s, ErrNoPhase
	}
	c := s
	post, adopted, err := w.find(ctx, s, phaseTrailers(s, ps))
	if err != nil {
		return s, err
	}
	var rr state.ReviewResult
	switch {
	case adopted:
		rr = state.ReviewResult{Approved: true, Comments: "adopted the phase's commit found at HEAD"}
		if c, err = w.adoptReviewRecord(c, ps); err != nil {
			return s, err
		}
	case ps.Error != "":
		rr = state.ReviewResult{Comments: "The developer agent reported failure:\n\n" + ps.Error}
	default:
		var asked bool
		if c, rr, asked, err = w.reviewChanges(ctx, s, ps); err != nil || asked {
			return c, err
		}
	}
	decision := DecideAfterReview(s, rr.Approved)
	iteration := ps.ReviewIteration() + 1
	if c, decision, err = w.recoveryDecision(ctx, c, ps, rr, decision); err != nil {
		return s, err
	}
	if ps.Error == "" {
		// A review ran (or its commit was adopted); a session that failed
		// was not reviewed, and the view must not say it was.
		ps = reviewed(ctx, ps, rr, iteration)
	}
	ps.Review = &rr
	if decision == DecideRetry || decision == DecideHalt || decision == decideRecover {
		// The tree is reset before the next attempt (or at the halt):
		// the failed attempt is kept under a ref for the retry to see.
		if ps, err = w.keepFailed(ctx, c, ps); err != nil {
			return s, err
		}
	}
	c, outcome, err := w.carryOut(ctx, c, ps, rr, decision, iteration, post)
	if err != nil {
		return s, err
	}
	if decision == decideRecover {
		return c, nil // recover emits phase_finished once it knows the outcome
	}
	graph.Emit(ctx, events.EventPhaseFinished, events.PhaseFinished{
		Phase: ps.Index + 1, Attempt: ps.Attempt, Iteration: iteration, Outcome: outcome,
		Duration: max(w.cfg.Clock().Sub(ps.StartedAt), 0), Lanes: max(len(ps.Lanes), 1),
	})
	return c, nil
}

// reviewChanges has the reviewer judge the uncommitted changes of phase
// ps (judge) and writes its decision record; the reviewer judges, and the
// commit takes, the agent's work only (checkOutsideEdits). An approval
// that narrows the plan asks the user first (narrowingChange): asked
// tells that review stops there, with the state returned.
func (w *workflow) reviewChanges(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, state.ReviewResult, bool, error) {
	if err := w.checkOutsideEdits(ctx, s, ps); err != nil {
		return s, state.ReviewResult{}, false, err
	}
	c, rr, err := w.judge(ctx, s)
	if err != nil {
		return s, rr, false, err
	}
	if c, err = w.writeReviewRecord(c, ps, rr); err != nil {
		return s, rr, false, err
	}
	if rr.Approved {
		if n, asked, err := w.narrowingChange(ctx, c, ps); err != nil || asked {
			return n, rr, true, err
		}
	}
	return c, rr, false, nil
}

// recoveryDecision is review's decision with recovery on: the 80% budget
// event (checkBudget) and, for a rejected review that iterates, retries
// or halts, the failure recorded (failed), which may reserve a Doctor
// call or a replan (checkpointed with this step) or run the stuck
// handler instead of the halt: decideRecover then. In task mode each
// rejected review iteration is a failed try of the task: without it a
// task that fails the same way every time reaches the halt with one
// failure recorded and nothing tried. With recovery off it is decision.
func (w *workflow) recoveryDecision(ctx context.Context, s state.ExecutionState, ps state.PhaseState, rr state.ReviewResult, decision Decision) (state.ExecutionState, Decision, error) {
	if !recoveryOn(s) {
		return s, decision, nil
	}
	c, err := w.checkBudget(ctx, s)
	if err != nil {
		return s, decision, err
	}
	if rr.Approved || (decision != DecideIterate && decision != DecideRetry && decision != DecideHalt) {
		return c, decision, nil
	}
	c, recovering, err := w.failed(ctx, c, ps, rr, decision == DecideHalt)
	if err != nil {
		return s, decision, err
	}
	if recovering && decision == DecideHalt {
		decision = decideRecover
	}
	return c, decision, nil
}

// reviewed emits the review of phase ps's iteration and returns ps with
// a rejection kept among its last state.MaxRejections.
func reviewed(ctx context.Context, ps state.PhaseState, rr state.ReviewResult, iteration int) state.PhaseState {
	graph.Emit(ctx, events.EventReview, events.Review{Phase: ps.Index + 1, Iteration: iteration, Approved: rr.Approved})
	if rr.Approved {
		return ps
	}
	ps.Rejections = append(ps.Rejections, state.Rejection{Attempt: ps.Attempt, Iteration: iteration, Review: rr})
	if n := len(ps.Rejections); n > state.MaxRejections {
		ps.Rejections = slices.Clone(ps.Rejections[n-state.MaxRejections:])
	}
	return ps
}

// carryOut carries out review's decision on phase ps, reviewed (rr) at
// iteration: commit an approved phase (approve, post its commit when
// adopted), go on with the task's session, run another attempt of the
// lanes at fault (retryLanes), leave it to the recover node, or halt. It
// returns the state and the outcome phase_finished reports.
func (w *workflow) carryOut(ctx context.Context, s state.ExecutionState, ps state.PhaseState, rr state.ReviewResult, decision Decision, iteration int, post string) (state.ExecutionState, string, error) {
	switch decision {
	case DecideDone, DecideNextPhase:
		c, err := w.approve(ctx, s, ps, post, decision == DecideDone)
		return c, events.OutcomeCompleted, err
	case DecideIterate:
		ps.Status = state.PhaseRetrying
		// Task mode: one task, one lane, whose session goes on.
		lane := soleLane(s, ps)
		lane.Iteration, lane.Status = iteration, state.LanePending
		c, err := s.WithPhaseState(withSoleLane(ps, lane))
		return c, events.OutcomeRetried, err
	case DecideRetry:
		ps.Status, ps.Attempt = state.PhaseRetrying, ps.Attempt+1
		setTasks(&ps, state.PhaseRetrying)
		c, err := s.WithPhaseState(retryLanes(ps, rr))
		return c, events.OutcomeRetried, err
	case decideRecover:
		ps.Status = state.PhaseRetrying
		c, err := s.WithPhaseState(ps.WithIteration(iteration))
		return c, events.OutcomeRetried, err
	case DecideHalt:
		c, err := w.halt(ctx, s, ps.WithIteration(iteration), "")
		if ps.Error != "" {
			return c, events.OutcomeFailed, err
		}
		return c, events.OutcomeHalted, err
	}
	return s, "", nil
}

// judge asks the reviewer, then the evaluator when there is one.
func (w *workflow) judge(ctx context.Context, s state.ExecutionState) (state.ExecutionState, state.ReviewResult, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, state.ReviewResult{}, err
	}
	ps, _ := current(s)
	d, err := w.driver(agent.RoleReviewer, s.Config)
	if err != nil {
		return s, state.ReviewResult{}, err
	}
	prompt, err := ReviewerPrompt(s)
	if err != nil {
		return s, state.ReviewResult{}, err
	}
	sess := agent.Session{
		Role: agent.RoleReviewer, RunID: s.Run.ID, Phase: ps.Index + 1, Attempt: ps.Attempt,
		Iteration: ps.ReviewIteration() + 1, Prompt: prompt, Dir: repo.Root(),
		Tools: agent.DefaultTools(agent.RoleReviewer),
	}
	rv, rep, err := structured(ctx, w, d, sess, agent.ParseReview)
	if err != nil && !errors.Is(err, agent.ErrBadOutput) {
		return s, state.ReviewResult{}, err
	}
	c := w.usage(ctx, s, agent.RoleReviewer, rep.Usage)
	if err != nil {
		return c, state.ReviewResult{}, fmt.Errorf("nodes: reviewer of phase %d: %w", ps.Index+1, err)
	}
	if rep.Status == agent.StatusFailed {
		return c, state.ReviewResult{}, fmt.Errorf("nodes: reviewer of phase %d failed: %s", ps.Index+1, rep.Error)
	}
	items := rv.Items
	if !rv.Approved && len(items) > 0 {
		c, items, err = w.evaluate(ctx, c, sess, rv)
		if err != nil {
			return s, state.ReviewResult{}, err
		}
	}
	rr := state.ReviewResult{Approved: rv.Approved, Comments: rv.Comments, Tasks: rv.Tasks}
	for _, it := range items {
		v := state.Verdict(strings.ToUpper(string(it.Disposition)))
		if v == "" || !v.Valid() {
			v = state.VerdictImplement
		}
		rr.Items = append(rr.Items, state.ReviewItem{Text: it.Text, Verdict: v, Reason: it.Reason})
		if v != state.VerdictImplement {
			w.cfg.Logger.Info("review item not acted on", "phase", ps.Index+1, "verdict", string(v), "item", it.Text, "reason", it.Reason)
		}
	}
	if nothingToAct(len(rv.Items), rr) {
		rr.Approved = true
		w.cfg.Logger.Info("review approved: every item deferred or rejected", "phase", ps.Index+1, "items", len(rv.Items))
	}
	return c, rr, nil
}

// evaluate sorts a rejected review's items with the evaluator, or keeps
// the reviewer's dispositions (IMPLEMENT when it gave none) when the run
// has no evaluator.
func (w *workflow) evaluate(ctx context.Context, s state.ExecutionState, sess agent.Session, rv agent.Review) (state.ExecutionState, []agent.ReviewItem, error) {
	d, err := w.driver(agent.RoleEvaluator, s.Config)
	if err != nil {
		return s, nil, err
	}
	if d == nil {
		return s, rv.Items, nil
	}
	sess.Role, sess.Tools = agent.RoleEvaluator, agent.DefaultTools(agent.RoleEvaluator)
	sess.Prompt = EvaluatorPrompt(toReview(rv))
	ev, rep, err := structured(ctx, w, d, sess, agent.ParseEvaluation)
	if err != nil && !errors.Is(err, agent.ErrBadOutput) {
		return s, nil, err
	}
	c := w.usage(ctx, s, agent.RoleEvaluator, rep.Usage)
	if err != nil {
		return s, nil, fmt.Errorf("nodes: evaluator of phase %d: %w", sess.Phase, err)
	}
	if rep.Status == agent.StatusFailed {
		return s, nil, fmt.Errorf("nodes: evaluator of phase %d failed: %s", sess.Phase, rep.Error)
	}
	return c, ev.Items, nil
}

func toReview(rv agent.Review) state.ReviewResult {
	r := state.ReviewResult{Approved: rv.Approved, Comments: rv.Comments}
	for _, it := range rv.Items {
		r.Items = append(r.Items, state.ReviewItem{Text: it.Text})
	}
	return r
}

// approve commits an approved phase (or adopts its commit, post) and, for
// the last phase, commits the run's record.
func (w *workflow) approve(ctx context.Context, s state.ExecutionState, ps state.PhaseState, post string, last bool) (state.ExecutionState, error) {
	ps.Status, ps.Error = state.PhaseCompleted, ""
	ps.CompletedAt = w.cfg.Clock().UTC()
	setTasks(&ps, state.PhaseCompleted)
	c, err := s.WithPhaseState(ps)
	if err != nil {
		return s, err
	}
	if post == "" {
		// What the session left is checked as it is committed
		// (writtenCheck): one walk of the tree, not two.
		if err := w.checkGitSettings(ctx, c, ps); err != nil {
			return s, err
		}
		if err := w.writeDeferred(c, ps); err != nil {
			return s, err
		}
		if err := w.writeRecord(c); err != nil {
			return s, err
		}
		if post, err = w.commitChecked(ctx, c, phaseSubject(c, ps), phaseTrailers(c, ps), ps.Untracked, writtenCheck(c, ps)); err != nil {
			return s, err
		}
		// The tree is clean now but for the user's untracked files, which
		// the next phase's preparePhase takes from here (notes.go).
		w.note(c, treeNote{kind: noteClean, phase: ps.Index, head: post, untracked: ps.Untracked})
	}
	if err := w.publish(ctx, c, post, ps.PreCommit); err != nil {
		return s, err
	}
	if err := w.cleanLanes(ctx, c, ps); err != nil {
		return s, err
	}
	ps.PostCommit = post
	if c, err = c.WithPhaseState(ps); err != nil {
		return s, err
	}
	if c, err = committedSummary(c, ps); err != nil {
		return s, err
	}
	if !last {
		return c, nil
	}
	c, sofar, err := w.storySoFar(ctx, c, ps.Index)
	if err != nil {
		return s, err
	}
	if ps, err = w.writeSummary(ctx, c, ps, sofar, false); err != nil {
		return s, err
	}
	if c, err = c.WithPhaseState(ps); err != nil {
		return s, err
	}
	c = w.withStatus(ctx, c, state.RunCompleted)
	if err := w.writeRecord(c); err != nil {
		return s, err
	}
	rec, err := w.commit(ctx, c, "gaffer: record of "+c.Run.Slug, recordTrailers(c), ps.Untracked)
	if err != nil {
		return s, err
	}
	if err := w.publish(ctx, c, rec, post); err != nil {
		return s, err
	}
	return c, nil
}

// halt resets the tree to the last good commit (the pre-phase commit),
// keeping only the user's untracked files, and halts the run.
// It refuses (HeadMovedError) when HEAD moved in a way the run did not.
// why, when not empty, is recovery's reason to stop (the stuck handler's),
// added to the halt message after "; recovery: ".
func (w *workflow) halt(ctx context.Context, s state.ExecutionState, ps state.PhaseState, why string) (state.ExecutionState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	if _, err := w.resettable(ctx, s, ps); err != nil {
		return s, err
	}
	keep := ps.Untracked
	if recoveryOn(s) {
		keep = append(slices.Clone(keep), recoveryDir(s)) // the decision records
	}
	if err := w.gitOp(repo, func() error { return repo.ResetTo(ctx, ps.PreCommit, keep) }); err != nil {
		return s, fmt.Errorf("nodes: halt phase %d: reset to %s: %w", ps.Index+1, short(ps.PreCommit), err)
	}
	if err := w.cleanLanes(ctx, s, ps); err != nil {
		return s, err
	}
	if recoveryOn(s) {
		// The run ends here: its last decision records go on its branch.
		rec, err := w.commitDecisions(ctx, s)
		if err != nil {
			return s, err
		}
		if rec != "" {
			if err := w.publish(ctx, s, rec, ps.PreCommit); err != nil {
				return s, err
			}
		}
	}
	ps.Status, ps.CompletedAt = state.PhaseFailed, w.cfg.Clock().UTC()
	setTasks(&ps, state.PhaseFailed)
	c, err := s.WithPhaseState(ps)
	if err != nil {
		return s, err
	}
	msg := fmt.Sprintf("phase %d halted after %d attempt(s), the last with %d session(s): %s", ps.Index+1, ps.Attempt,
		ps.ReviewIteration(), haltCause(ps))
	switch {
	case strings.HasPrefix(why, recovery.BudgetSpentPrefix):
		msg = fmt.Sprintf("run halted: %s", why) // the phase's attempt did not start
	case why != "":
		msg += "; recovery: " + why
	}
	return w.withStatus(ctx, c.WithError(msg), state.RunHalted), nil
}

// maxCauseLines and maxCauseRunes bound the cause in a halt message.
const (
	maxCauseLines = 6
	maxCauseRunes = 600
)

// haltCause is why phase ps halted, on one line: the agent's error when it
// reported failure, else the last review's comments — their first
// non-empty lines, joined with " | " and cut to a sane size.
func haltCause(ps state.PhaseState) string {
	if ps.Error != "" {
		return "the developer agent reported failure: " + excerpt(ps.Error)
	}
	if ps.Review == nil {
		return "rejected"
	}
	if c := excerpt(ps.Review.Comments); c != "" {
		return c
	}
	var items []string
	for _, it := range ps.Review.Items {
		if it.Verdict == state.VerdictImplement || it.Verdict == "" {
			items = append(items, it.Text)
		}
	}
	if len(items) > 0 {
		return "rejected: " + excerpt(strings.Join(items, "\n"))
	}
	return "rejected without comments"
}

// excerpt joins the first maxCauseLines non-empty lines of text with " | "
// and cuts the result at maxCauseRunes runes.
func excerpt(text string) string {
	var lines []string
	more := false
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if len(lines) == maxCauseLines {
			more = true
			break
		}
		lines = append(lines, l)
	}
	out := strings.Join(lines, " | ")
	if r := []rune(out); len(r) > maxCauseRunes {
		out, more = string(r[:maxCauseRunes]), true
	}
	if more {
		out += " …"
	}
	return out
}
