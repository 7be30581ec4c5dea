package nodes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
