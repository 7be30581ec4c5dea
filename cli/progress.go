package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// progress shows a run as it goes, from the runner's events: plain log
// lines when the output is not a terminal (tests, CI); on a terminal with
// a screen, the phase tree pinned below every other line and redrawn in
// place at every event (live.go); on a terminal without one, the phase
// tree printed after every phase-level step.
type progress struct {
	w      io.Writer
	tty    bool
	runner stateReader
	runID  string
	mu     sync.Mutex
	last   string // the node of the last NodeStarted
	drawn  string // the last tree drawn, to draw each picture once
	live   *liveTree
	now    func() time.Time // the running phase's time
}

// worthDrawing reports whether the tree of s is news: a phase starting
// (after the approval or next_task), a retry, or the end; and not the
// picture drawn last.
func (p *progress) worthDrawing(s state.ExecutionState) bool {
	ps := state.PhaseState{}
	if i := s.Progress.CurrentPhase(); i < len(s.Progress.Phases) {
		ps = s.Progress.Phases[i]
	}
	if p.last == nodes.NodeReview && ps.Status == state.PhaseCompleted && !s.Status.Terminal() {
		return false // next_task draws the next phase starting
	}
	if p.last == nodes.NodeApproval && ps.Status == state.PhasePending {
		return false
	}
	var b strings.Builder
	writeRunTree(&b, s, time.Time{}) // a running phase's time is no news
	if b.String() == p.drawn {
		return false
	}
	p.drawn = b.String()
	return true
}

func newProgress(w io.Writer, tty bool, r stateReader, runID string) *progress {
	return &progress{w: w, tty: tty, runner: r, runID: runID, now: time.Now}
}

func (p *progress) event(e graph.Event) {
	if e.RunID != p.runID {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil {
		p.liveEvent(e)
		return
	}
	switch e.Kind {
	case graph.NodeStarted:
		p.last = e.Node
		if !p.tty || e.Attempt > 1 {
			fmt.Fprintf(p.w, "» %s\n", e.Node)
		}
	case graph.Custom:
		p.custom(e)
	case graph.CheckpointSaved:
		if p.tty && (p.last == nodes.NodeReview || p.last == nodes.NodeNextTask || p.last == nodes.NodeApproval) {
			if snap, err := p.runner.State(context.Background(), host.RunRequest{RunID: p.runID}); err == nil && p.worthDrawing(snap.State) {
				p.treeLocked(snap.State, "")
			}
		}
	case graph.NodeFinished:
		if nodeFailure(e.Err) {
			fmt.Fprintf(p.w, "✗ %s: %v\n", e.Node, e.Err)
		}
	}
}

// nodeFailure reports whether a node's err is printed as its failure
// ("✗ node: err"). A question (an interrupt) and the run's own
// cancellation (Ctrl-C, `gaffer cancel`) are no failures, and a stop
// the run's outcome tells in full with its fix (files changed outside
// the agent's session, HEAD moved, git settings changed) is told once,
// there.
func nodeFailure(err error) bool {
	var ie *graph.InterruptError
	switch {
	case err == nil, errors.As(err, &ie), errors.Is(err, context.Canceled),
		errors.Is(err, nodes.ErrOutsideEdits), errors.Is(err, nodes.ErrHeadMoved), errors.Is(err, nodes.ErrGitSettings):
		return false
	}
	return true
}

// custom prints the line of a custom event's payload (runview.EventLine).
func (p *progress) custom(e graph.Event) {
	if line, ok := runview.EventLine(p.runID, e.Payload); ok {
		fmt.Fprintln(p.w, line)
	}
}

// tree prints the phase tree of s with a heading; with a live tree, it
// draws s as the final frame and leaves it on the screen.
func (p *progress) tree(_ context.Context, s state.ExecutionState, heading string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil {
		p.live.finish(s)
		return
	}
	p.treeLocked(s, heading)
}

func (p *progress) treeLocked(s state.ExecutionState, heading string) {
	if heading != "" {
		fmt.Fprintln(p.w, heading)
	}
	fmt.Fprintln(p.w)
	writeRunTree(p.w, s, p.now())
}
