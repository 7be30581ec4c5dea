package nodes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// decisionNarrowingChange is the question (and decision) of a phase whose
// changes weaken its tests after recovery acted on it.
const decisionNarrowingChange = "narrowing_change"

// testChanges reads the test files phase ps changed, as the pre-phase
// commit and the work tree have them (the user's untracked files and the
// execution directory left out).
func (w *workflow) testChanges(ctx context.Context, s state.ExecutionState, ps state.PhaseState) ([]recovery.FileChange, error) {
	repo, err := w.repo(s)
	if err != nil {
		return nil, err
	}
	st, err := repo.StatusOutside(ctx, keepList(s, ps))
	if err != nil {
		return nil, fmt.Errorf("nodes: phase %d's test changes: %w", ps.Index+1, err)
	}
	var out []recovery.FileChange
	for _, l := range [][]string{st.Modified, st.Added, st.Deleted, st.Untracked} {
		for _, p := range l {
			if strings.HasSuffix(p, "/") || !recovery.IsTestFile(p) || under(p, keepList(s, ps)) {
				continue
			}
			before, _, err := repo.FileAt(ctx, ps.PreCommit, p)
			if err != nil {
				return nil, fmt.Errorf("nodes: phase %d's test changes: %w", ps.Index+1, err)
			}
			after, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(p)))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("nodes: phase %d's test changes: %w", ps.Index+1, err)
			}
			out = append(out, recovery.FileChange{Path: p, Before: string(before), After: string(after)})
		}
	}
	return out, nil
}

// narrowingChange checks, for a phase that recovery acted on (a
// failure is recorded: a hint, a revision, an escalation or a human's
// answer followed), whether the changes the reviewer approved weaken the
// tests (recovery.CheckTestChanges). When they do, the approval does not
// stand: the phase waits for a human, with the reasons, and `approve
// --decision retry` gives it a fresh attempt from its pre-phase commit.
// It reports whether it asked.
func (w *workflow) narrowingChange(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, bool, error) {
	if !recoveryOn(s) {
		return s, false, nil
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return s, false, err
	}
	if len(rs.Memory.Phase(ps.Index).Failures) == 0 {
		return s, false, nil
	}
	changes, err := w.testChanges(ctx, s, ps)
	if err != nil {
		return s, false, err
	}
	problems := recovery.CheckTestChanges(changes)
	if len(problems) == 0 {
		return s, false, nil
	}
	why := "the phase's changes weaken its tests: " + strings.Join(problems, "; ")
	rr := state.ReviewResult{Comments: "The workflow refused the approval: " + why}
	graph.Emit(ctx, events.EventReview, events.Review{Phase: ps.Index + 1, Iteration: ps.ReviewIteration() + 1, Approved: false})
	ps.Review, ps.Status = &rr, state.PhaseRetrying
	ps = ps.WithIteration(ps.ReviewIteration() + 1)
	c, err := s.WithPhaseState(ps)
	if err != nil {
		return s, false, err
	}
	rs.Exhausted = true // the human's retry is a fresh attempt; a stop counts this one
	rs = w.decide(ctx, c, rs, ps, "diff:"+decisionNarrowingChange, why)
	c, err = w.toHuman(ctx, c, rs, ps, decisionNarrowingChange, why, problems)
	return c, true, err
}

// The second opinion on a revision (issue 33; recovery.SecondOpinionPrompt).
const (
	decisionSecondOpinion = "second_opinion" // :yes, :no, :none (no answer to read), :skipped (budget spent)
)

// checkRevision judges the replanner's revision of phase ps: the
// mechanical checks first (recovery.CheckRevision), the floor; then,
// when they pass, the run has a reviewer model and the revision rewrites
// the goal's tasks (recovery.RewritesTasks), the reviewer model's answer
// to one question, "does this revision still deliver the goal?". Its no
// adds a refusal, its yes or an answer that does not parse adds nothing;
// its tokens are the reviewer role's, counted in the run's budget, and
// its answer is a decision record (second_opinion:yes|no|none). With the
// run budget spent it is not asked (second_opinion:skipped). It returns
// the state with the usage, the recovery state with the decisions and
// the problems, none when the revision stands.
func (w *workflow) checkRevision(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, a recovery.Anchor, revised []state.Task, approach string) (state.ExecutionState, recoveryState, []string, error) {
	if problems := recovery.CheckRevision(a, revised, approach); len(problems) > 0 {
		return s, rs, problems, nil
	}
	model := s.Config.Agents.Reviewer.Model
	if model == "" || !recovery.RewritesTasks(a, revised) {
		return s, rs, nil, nil
	}
	if over := runBudget(s, rs).Over(); len(over) > 0 {
		rs = w.decide(ctx, s, rs, ps, decisionSecondOpinion+":skipped", "the reviewer model was not asked: the run budget is spent: "+strings.Join(over, "; "))
		return s, rs, nil, nil
	}
	d, err := w.driver(agent.RoleReviewer, s.Config)
	if err != nil {
		return s, rs, nil, err
	}
	repo, err := w.repo(s)
	if err != nil {
		return s, rs, nil, err
	}
	pm := rs.Memory.Phase(ps.Index)
	sess := agent.Session{Role: agent.RoleReviewer, RunID: s.Run.ID, Phase: ps.Index + 1, Attempt: lastAttempt(pm), Iteration: 1,
		Revision: max(pm.Replans, 1), Prompt: recovery.SecondOpinionPrompt(a, revised, approach), Dir: repo.Root(),
		Tools: []string{agent.ToolRead, agent.ToolList, agent.ToolGrep}}
	rv, rep, err := structured(ctx, w, d, sess, agent.ParseReview)
	if err != nil && !errors.Is(err, agent.ErrBadOutput) {
		return s, rs, nil, err
	}
	c := w.usage(ctx, s, agent.RoleReviewer, rep.Usage)
	who := fmt.Sprintf("the reviewer model %s", model)
	switch {
	case err != nil || rep.Status == agent.StatusFailed:
		why := fmt.Sprintf("%s gave no answer to read (%s); the mechanical checks stand", who, orText(rep.Error, fmt.Sprint(err)))
		rs = w.decide(ctx, c, rs, ps, decisionSecondOpinion+":none", why)
		return c, rs, nil, nil
	case rv.Approved:
		rs = w.decide(ctx, c, rs, ps, decisionSecondOpinion+":yes", who+" says the revision still delivers the goal: "+orText(rv.Comments, "no reason given"))
		return c, rs, nil, nil
	}
	why := who + " says the revision no longer delivers the goal: " + orText(rv.Comments, "no reason given")
	rs = w.decide(ctx, c, rs, ps, decisionSecondOpinion+":no", why)
	return c, rs, []string{why}, nil
}
