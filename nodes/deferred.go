package nodes

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// nothingToAct reports whether a rejected review leaves nothing to act
// on: the reviewer named items, and the evaluator (or the reviewer's own
// dispositions) deferred or rejected every one of them, or left none.
// Seed 002: DEFER items are "log but don't retry for"; such a rejection
// is an approval, and another attempt would burn a session on nits.
// A rejection without items (its comments are the reason) stays one.
func nothingToAct(reviewerItems int, rr state.ReviewResult) bool {
	if rr.Approved || reviewerItems == 0 {
		return false
	}
	for _, it := range rr.Items {
		if it.Verdict == state.VerdictImplement || it.Verdict == "" {
			return false
		}
	}
	return true
}

// notActedOn returns the items of an approved review that were deferred or
// rejected.
func notActedOn(r *state.ReviewResult) []state.ReviewItem {
	if r == nil || !r.Approved {
		return nil
	}
	var out []state.ReviewItem
	for _, it := range r.Items {
		if it.Verdict == state.VerdictDefer || it.Verdict == state.VerdictReject {
			out = append(out, it)
		}
	}
	return out
}

// deferredSection is what review-feedback.md gains when phase ps was
// approved with items not acted on, or "" when it has none.
func deferredSection(ps state.PhaseState) string {
	if len(notActedOn(ps.Review)) == 0 {
		return ""
	}
	return fmt.Sprintf("\n## Attempt %d approved: nothing to act on now\n\n"+
		"The review's items were all deferred or rejected, so the phase was approved "+
		"without another attempt (seed 002: deferred items are logged, not retried for).\n%s",
		ps.Attempt, feedbackBody(ps, true))
}

// writeDeferred adds phase ps's items not acted on to its
// review-feedback.md (made when missing), before the phase's commit takes
// it. Run again after a crash it finds its section there and writes
// nothing.
func (w *workflow) writeDeferred(s state.ExecutionState, ps state.PhaseState) error {
	sec := deferredSection(ps)
	if sec == "" {
		return nil
	}
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	rel := feedbackPath(s, ps.Index)
	old, err := workspace.ReadFileBeneath(repo.Root(), rel, maxFeedbackFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = fmt.Appendf(nil, "# Phase %d: review feedback\n", ps.Index+1)
	case err != nil:
		return fmt.Errorf("nodes: read %s: %w", rel, err)
	case strings.Contains(string(old), sec):
		return nil
	}
	return w.write(s, rel, string(old)+sec)
}

// maxFeedbackFile bounds the review-feedback.md writeDeferred reads back:
// the file is gaffer's, written for one phase; a bigger one was planted.
const maxFeedbackFile = 4 << 20

// DeferredItems lists, one line each, the review items of the run's
// approved phases that were deferred or rejected rather than acted on,
// for the run's end summary: "phase 2: DEFER: text (reason)".
func DeferredItems(s state.ExecutionState) []string {
	var out []string
	for _, ps := range s.Progress.Phases {
		for _, it := range notActedOn(ps.Review) {
			l := fmt.Sprintf("phase %d: %s: %s", ps.Index+1, it.Verdict, it.Text)
			if it.Reason != "" {
				l += " (" + it.Reason + ")"
			}
			out = append(out, l)
		}
	}
	return out
}
