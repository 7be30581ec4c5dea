package mcpserve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// Why run_wait returned.
const (
	WaitNeedsHuman = "needs_human"
	WaitEnded      = "ended"
	WaitStopped    = "stopped"
	WaitTimeout    = "timeout"
)

// The bounds of run_wait's timeout.
const (
	defaultWait = 10 * time.Minute
	maxWait     = time.Hour
)

// waitReason is why a wait on a run that looks as v ends, "" while it
// goes on: the run needs a human, has ended, or no process runs it.
func waitReason(v runview.Run) string {
	var st state.RunStatus
	if err := st.UnmarshalText([]byte(v.Status)); err != nil {
		return "" // serve's queued and starting: not started yet
	}
	switch {
	case st == state.RunAwaitingApproval:
		return WaitNeedsHuman
	case st.Terminal():
		return WaitEnded
	case v.Stopped:
		return WaitStopped
	}
	return ""
}

// progressOf is the progress run_wait notifies for v, whose current
// phase's lanes are lanes: the phases done of the plan's, and a line
// saying where the run is, lane by lane.
func progressOf(v runview.Run, lanes []state.LaneProgress) (done, total float64, msg string) {
	for _, p := range v.Phases {
		if p.Status == state.PhaseCompleted.String() || p.Status == state.PhaseSkipped.String() {
			done++ // a skipped phase is behind the run too
		}
	}
	total = float64(len(v.Phases))
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", v.RunID, v.Status)
	if v.CurrentPhase > 0 && v.CurrentPhase <= len(v.Phases) {
		p := v.Phases[v.CurrentPhase-1]
		fmt.Fprintf(&b, ", phase %d of %d %s (attempt %d)", p.Number, len(v.Phases), p.Status, p.Attempt)
		if len(p.Tasks) > 0 {
			fmt.Fprintf(&b, ", tasks %s", strings.Join(p.Tasks, ", "))
		}
		if len(lanes) > 1 {
			parts := make([]string, len(lanes))
			for i, l := range lanes {
				parts[i] = fmt.Sprintf("%s %s", strings.Join(l.Tasks, "+"), l.Status)
				if l.Attempt > 1 {
					parts[i] += fmt.Sprintf(" (attempt %d)", l.Attempt)
				}
			}
			fmt.Fprintf(&b, "; lanes: %s", strings.Join(parts, ", "))
		}
	}
	if len(v.Next) > 0 {
		fmt.Fprintf(&b, "; next %s", strings.Join(v.Next, ", "))
	}
	return done, total, b.String()
}

func (s *Server) runWait(ctx context.Context, req *mcp.CallToolRequest, in waitInput) (*mcp.CallToolResult, Waited, error) {
	if err := checkRunID(in.RunID); err != nil {
		return nil, Waited{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, waitLimit(in.TimeoutSeconds))
	defer cancel()
	w := newWaiter(req, in.RunID)
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		v, rs, err := s.viewOf(wctx, in.RunID)
		if wctx.Err() != nil {
			break
		}
		if err != nil {
			return nil, Waited{}, err
		}
		ask, reason, err := w.look(wctx, s, v, rs)
		switch {
		case err != nil:
			return nil, Waited{}, err
		case ask != nil:
			return ask, Waited{}, nil
		case reason != "":
			return nil, Waited{Reason: reason, Run: v, UserAnswers: w.answers}, nil
		}
		select {
		case <-wctx.Done():
		case <-tick.C:
			continue
		}
		break
	}
	if ctx.Err() != nil { // the request was cancelled, or its client went away
		return nil, Waited{}, fmt.Errorf("run_wait on %s: %w", in.RunID, ctx.Err())
	}
	v, err := s.view(ctx, in.RunID)
	return nil, Waited{Reason: WaitTimeout, Run: v, UserAnswers: w.answers}, err
}

// waitLimit is how long run_wait waits when asked for seconds (0: the
// default), at most maxWait.
func waitLimit(seconds int) time.Duration {
	if seconds > 0 {
		return min(time.Duration(seconds)*time.Second, maxWait)
	}
	return defaultWait
}

// waiter is what one run_wait call remembers between its looks at the
// run: the progress last notified, whether it may elicit the user's
// answer, and the answers given.
type waiter struct {
	req    *mcp.CallToolRequest
	token  any    // the progress token, nil when the client wants none
	last   string // the progress message last sent
	elicit bool
	// A call retried with the user's answer to the plan it asked about
	// (multi round-trip, SEP-2322): res and st until it is taken.
	res      *mcp.ElicitResult
	st       askState
	answers  []Answered
	answered int // the plan revision the user answered, while the run still shows it; -1 for none
}

// newWaiter starts the wait of req on run id: a retried call is answered
// as the user said, and the wait goes on.
func newWaiter(req *mcp.CallToolRequest, id string) *waiter {
	w := &waiter{req: req, token: req.Params.GetProgressToken(), elicit: canElicit(req.Session), answered: -1}
	w.res, w.st = asked(req, id)
	w.answers = w.st.Answers
	if w.res != nil {
		w.elicit = w.elicit && multiRoundTrip(req.Session) // the SDK retries an older client's call once only
	}
	return w
}

// look takes one view v of the run: it notifies progress, answers the
// plan a retried call asked about, and returns the elicitation to send,
// or why the wait ends ("" while it goes on).
func (w *waiter) look(ctx context.Context, s *Server, v runview.Run, rs host.RunStatus) (*mcp.CallToolResult, string, error) {
	w.notify(ctx, v, rs)
	if err := w.takeAnswer(ctx, s, v); err != nil {
		return nil, "", err
	}
	r := waitReason(v)
	if r == WaitNeedsHuman && v.Asks == runview.AsksApproval {
		switch {
		case v.PlanRevision == w.answered:
			r = "" // answered: the run takes the answer
		case w.elicit:
			if ask := askApproval(v, rs, w.answers); ask != nil {
				return ask, "", nil
			}
		}
	}
	if r != "" {
		return nil, r, nil
	}
	if w.answered >= 0 && v.Asks != runview.AsksApproval {
		w.answered = -1 // the run took the answer
	}
	return nil, "", nil
}

// notify sends the run's progress when the client asked for it and it
// changed.
func (w *waiter) notify(ctx context.Context, v runview.Run, rs host.RunStatus) {
	if w.token == nil {
		return
	}
	done, total, msg := progressOf(v, currentLanes(rs.Snapshot.State, v.CurrentPhase))
	if msg != w.last {
		w.last = msg
		_ = w.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: w.token, Progress: done, Total: total, Message: msg})
	}
}

// takeAnswer answers the run as the retried call's user said, once. A
// cancelled elicitation stops eliciting: the model is told the run needs
// a human, as without elicitation.
func (w *waiter) takeAnswer(ctx context.Context, s *Server, v runview.Run) error {
	if w.res == nil {
		return nil
	}
	a, err := s.answerAsked(ctx, v, w.res, w.st)
	if err != nil {
		return err
	}
	if a != nil {
		w.answers = append(w.answers, *a)
		w.answered = w.st.Revision
	} else {
		w.elicit = false
	}
	w.res = nil
	return nil
}

// currentLanes is the lanes of s's phase n (1-based); none before the
// plan runs.
func currentLanes(s state.ExecutionState, n int) []state.LaneProgress {
	if n < 1 || n > len(s.Progress.Phases) {
		return nil
	}
	return s.Progress.Phases[n-1].Lanes
}
