package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/serve"
)

// EventLogger logs the runtime's events with run, node and phase
// attributes: nodes starting and finishing at debug, phases, reviews and
// status changes at info, failures at error. A run cut off by its context
// (serve's drain, a cancel) is not a failure: it is logged at info as
// stopped (the message) at its last checkpoint.
func EventLogger(log *slog.Logger, stopped string) func(graph.Event) {
	var mu sync.Mutex
	seqs := map[string]uint64{} // the newest checkpoint of each run
	return func(ev graph.Event) {
		l := log.With("run", ev.RunID)
		cut := ev.Err != nil && (errors.Is(ev.Err, context.Canceled) || errors.Is(ev.Err, context.DeadlineExceeded) ||
			errors.Is(ev.Err, serve.ErrDrained) || errors.Is(ev.Err, serve.ErrCancelled))
		// Fenced: another host took the run over; this one's attempt
		// stops, and the run goes on there.
		fenced := errors.Is(ev.Err, checkpoint.ErrFenced)
		switch ev.Kind {
		case graph.CheckpointSaved:
			mu.Lock()
			seqs[ev.RunID] = max(seqs[ev.RunID], ev.Seq)
			mu.Unlock()
		case graph.NodeStarted:
			l.Debug("node started", "node", ev.Node, "step", ev.Step, "attempt", ev.Attempt)
		case graph.NodeFinished:
			var ie *graph.InterruptError
			switch {
			case errors.As(ev.Err, &ie):
				// Waiting for a human is no failure, and the plan (the
				// interrupt's payload) is for plan show, not the log.
				l.Info("waiting for approval", "node", ev.Node, "step", ev.Step)
			case cut:
				l.Debug("node interrupted", "node", ev.Node, "step", ev.Step, "duration", ev.Duration)
			case fenced:
				l.Info("node stopped: another host holds the run", "node", ev.Node, "step", ev.Step, "err", ev.Err)
			case ev.Err != nil:
				l.Error("node failed", "node", ev.Node, "step", ev.Step, "duration", ev.Duration, "err", ev.Err)
			default:
				l.Debug("node finished", "node", ev.Node, "step", ev.Step, "duration", ev.Duration)
			}
		case graph.NodeRetry:
			l.Warn("node retry", "node", ev.Node, "attempt", ev.Attempt, "err", ev.Err)
		case graph.RunFinished:
			mu.Lock()
			seq := max(seqs[ev.RunID], ev.Seq)
			delete(seqs, ev.RunID)
			mu.Unlock()
			switch {
			case cut:
				l.Info(stopped, "seq", seq)
			case fenced:
				l.Warn("run taken over by another host; this host stopped its attempt", "seq", seq, "err", ev.Err)
			case ev.Err != nil:
				l.Error("run failed", "seq", seq, "err", ev.Err)
			default:
				l.Info("run stopped", "status", fmt.Sprint(ev.Payload), "seq", seq)
			}
		case graph.Custom:
			switch p := ev.Payload.(type) {
			case events.PhaseFinished:
				l.Info("phase finished", "node", ev.Node, "phase", p.Phase, "attempt", p.Attempt, "iteration", p.Iteration,
					"outcome", p.Outcome, "duration", p.Duration)
			case events.Review:
				l.Info("review", "node", ev.Node, "phase", p.Phase, "iteration", p.Iteration, "approved", p.Approved)
			case events.RunStatus:
				l.Info("run status", "from", p.From, "to", p.To)
			}
		}
	}
}
