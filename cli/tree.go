package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// The phase tree of a run has one view model and one renderer. status,
// the progress of a run (plain or live, progress.go and live.go) and
// status --watch all build a WatchView with runview.Of (the inbox's web
// pages too) and draw its phases with writePhaseTree; each adds only its
// own heading and footer.
// Drawn from the same state at the same time, their phase lines are the
// same (TestStatusLiveAndWatchDrawTheSameTree).
//
//	Phase 1 (test): ✓ Completed (1m15s, 6e02982)
//	  ├── ✓ [test] 1a Write tests for Add and Sub
//	  └── ✓ [test] 1b Write tests for Parse
//	Phase 2 (test+impl): ● Retrying (3m2s, attempt 2)
//	  2 lanes: ✓ 2a Write tests for Mul (1m2s) · ● 2b Mul (running 40s, attempt 2)
//	  ├── ✓ [test] 2a Write tests for Mul
//	  └── ● [impl] 2b Mul

// writePhaseTree draws the phases of a view and their tasks with status
// marks, then the phase's time, attempt (from the second), review
// iteration and commit.
func writePhaseTree(w io.Writer, phases []WatchPhase) {
	for _, p := range phases {
		var notes []string
		if d := p.Duration(); d != "" {
			notes = append(notes, d)
		}
		if p.Attempt > 1 {
			notes = append(notes, fmt.Sprintf("attempt %d", p.Attempt))
		}
		if p.ReviewIteration > 0 {
			notes = append(notes, fmt.Sprintf("review %d", p.ReviewIteration))
		}
		if p.Commit != "" {
			notes = append(notes, p.Commit)
		}
		extra := ""
		if len(notes) > 0 {
			extra = " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintf(w, "Phase %d%s: %s %s%s\n", p.Number, runview.Kind(p.Tasks), p.Mark(), p.Word(), extra)
		if l := p.LanesLine(); l != "" {
			fmt.Fprintf(w, "  %d lanes: %s\n", len(p.Lanes), l)
		}
		for i, t := range p.Tasks {
			branch := "├──"
			if i == len(p.Tasks)-1 {
				branch = "└──"
			}
			typ := ""
			if t.Type != "" {
				typ = "[" + t.Type + "] "
			}
			fmt.Fprintf(w, "  %s %s %s%s %s\n", branch, t.Mark(), typ, t.ID, t.Title)
		}
	}
}

// writeRunHeading is the tree's heading in status and a run's progress:
// the goal (or slug) and the run, with its status unless a still picture
// of a running run (status prints the status above it); live, also the
// tokens and cost so far.
func writeRunHeading(w io.Writer, v WatchView, live bool) {
	goal := v.Goal
	if goal == "" {
		goal = v.Slug
	}
	if v.Status == state.RunRunning.String() && !live {
		fmt.Fprintf(w, "%s  [%s]\n", goal, v.RunID)
	} else {
		fmt.Fprintf(w, "%s  [%s, %s]\n", goal, v.RunID, v.Status)
	}
	if u := v.Usage; live && u != (state.Usage{}) {
		fmt.Fprintf(w, "tokens: %d in, %d out, %d cached  cost: $%.4f\n", u.InputTokens, u.OutputTokens, u.CachedTokens, u.CostUSD)
	}
}

// writeRunTree writes the run's heading and phase tree at now, as status
// and a run's plain progress print it.
func writeRunTree(w io.Writer, s state.ExecutionState, now time.Time) {
	v := runview.Of(s, s.Status, now)
	writeRunHeading(w, v, false)
	writePhaseTree(w, v.Phases)
}
