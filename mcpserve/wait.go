package mcpserve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	limit := defaultWait
	if in.TimeoutSeconds > 0 {
		limit = min(time.Duration(in.TimeoutSeconds)*time.Second, maxWait)
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	token := req.Params.GetProgressToken()
	last := ""
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	elicit := canElicit(req.Session)
	// A call retried with the user's answer to the plan it asked about
	// (multi round-trip, SEP-2322): the run is answered as they said, and
	// the wait goes on.
	res, st := asked(req, in.RunID)
	answers := st.Answers
	answered := -1 // the plan revision the user answered, while the run still shows it
	if res != nil {
		elicit = elicit && multiRoundTrip(req.Session) // the SDK retries an older client's call once only
	}
	for {
		v, rs, err := s.viewOf(wctx, in.RunID)
		if wctx.Err() == nil && err != nil {
			return nil, Waited{}, err
		}
		if wctx.Err() == nil {
			if token != nil {
				done, total, msg := progressOf(v, currentLanes(rs.Snapshot.State, v.CurrentPhase))
				if msg != last {
					last = msg
					_ = req.Session.NotifyProgress(wctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: done, Total: total, Message: msg})
				}
			}
			if res != nil {
				a, err := s.answerAsked(wctx, v, res, st)
				if err != nil {
					return nil, Waited{}, err
				}
				if a != nil {
					answers = append(answers, *a)
					answered = st.Revision
				} else {
					elicit = false // cancelled: the model is told the run needs a human, as without elicitation
				}
				res = nil
			}
			r := waitReason(v)
			if r == WaitNeedsHuman && v.Asks == runview.AsksApproval {
				switch {
				case v.PlanRevision == answered:
					r = "" // answered: the run takes the answer
				case elicit:
					if ask := askApproval(v, rs, answers); ask != nil {
						return ask, Waited{}, nil
					}
				}
			}
			if r != "" {
				return nil, Waited{Reason: r, Run: v, UserAnswers: answers}, nil
			}
			if answered >= 0 && v.Asks != runview.AsksApproval {
				answered = -1 // the run took the answer
			}
			select {
			case <-wctx.Done():
			case <-tick.C:
				continue
			}
		}
		if ctx.Err() != nil { // the request was cancelled, or its client went away
			return nil, Waited{}, fmt.Errorf("run_wait on %s: %w", in.RunID, ctx.Err())
		}
		v, err = s.view(ctx, in.RunID)
		return nil, Waited{Reason: WaitTimeout, Run: v, UserAnswers: answers}, err
	}
}

// currentLanes is the lanes of s's phase n (1-based); none before the
// plan runs.
func currentLanes(s state.ExecutionState, n int) []state.LaneProgress {
	if n < 1 || n > len(s.Progress.Phases) {
		return nil
	}
	return s.Progress.Phases[n-1].Lanes
}
