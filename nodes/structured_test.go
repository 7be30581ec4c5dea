package nodes

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// garbleReviews answers the reviewer's first n sessions with text that is
// not a review, as a model that ignores the format would.
type garbleReviews struct {
	inner agent.Driver
	mu    sync.Mutex
	n     int
}

func (d *garbleReviews) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	rep, err := d.inner.Run(ctx, s)
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.Role == agent.RoleReviewer && d.n > 0 && err == nil {
		d.n--
		rep.Output = "Looks good to me!"
		if rep.SessionID == "" {
			rep.SessionID = "review-session"
		}
	}
	return rep, err
}

func TestReviewInTheWrongFormatIsAskedForOnceMore(t *testing.T) {
	h := newHarness(t, retryScript)
	h.rec.inner = &garbleReviews{inner: h.rec.inner, n: 1}
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	mustDone(t, res, err, state.RunCompleted)
	revs, ids := h.rec.of(agent.RoleReviewer)
	if len(revs) != 4 { // phase 1 twice (garbled, then again), phase 2 attempts 1 and 2
		t.Fatalf("%d reviewer sessions, want 4", len(revs))
	}
	if !strings.Contains(revs[1].Prompt, "could not be read") || revs[1].SessionID != ids[0] {
		t.Fatalf("the second review continues session %q with the parse error; got session %q, prompt:\n%s", ids[0], revs[1].SessionID, revs[1].Prompt)
	}
}

func TestReviewInTheWrongFormatTwiceFailsTheStep(t *testing.T) {
	h := newHarness(t, retryScript)
	h.rec.inner = &garbleReviews{inner: h.rec.inner, n: 100}
	_, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	if !errors.Is(err, agent.ErrBadOutput) || !strings.Contains(err.Error(), "reviewer of phase 1") {
		t.Fatalf("run error = %v, want the reviewer's output that does not parse (ErrBadOutput)", err)
	}
	if revs, _ := h.rec.of(agent.RoleReviewer); len(revs) != 2 {
		t.Fatalf("%d reviewer sessions, want 2: asked once more, then the step fails", len(revs))
	}
}
