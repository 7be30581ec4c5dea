package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/state"
)

// The phase tree of a run has one view model and one renderer. status,
// the progress of a run (plain or live, progress.go and live.go) and
// status --watch all build a WatchView with treeViewOf and draw its
// phases with writePhaseTree; each adds only its own heading and footer.
// Drawn from the same state at the same time, their phase lines are the
// same (TestStatusLiveAndWatchDrawTheSameTree).
//
//	Phase 1 (test): ✓ Completed (1m15s, 6e02982)
//	  ├── ✓ [test] 1a Write tests for Add and Sub
//	  └── ✓ [test] 1b Write tests for Parse
//	Phase 2 (test+impl): ● Retrying (3m2s, attempt 2)
//	  ├── ✓ [test] 2a Write tests for Mul
//	  └── ● [impl] 2b Mul

// treeViewOf is the view of run state s, whose status is st (a run
// interrupted for approval says so only in its checkpoint, see runStatus),
// at now: a phase that has ended shows how long it took, one that runs
// how long it has run so far. A zero now leaves out the running phases'
// times (a picture that does not change while a phase runs).
func treeViewOf(s state.ExecutionState, st state.RunStatus, now time.Time) WatchView {
	v := WatchView{RunID: s.Run.ID, Status: st.String(), Goal: s.Run.Goal, Slug: s.Run.Slug,
		ReviewIteration: s.Progress.ReviewIteration, Errors: s.Errors, Usage: s.TotalUsage()}
	if len(s.Plan.Phases) > 0 {
		v.CurrentPhase = s.Progress.CurrentPhase + 1
	}
	for i, ph := range s.Plan.Phases {
		var ps state.PhaseState
		if i < len(s.Progress.Phases) {
			ps = s.Progress.Phases[i]
		}
		wp := WatchPhase{Number: i + 1, Status: ps.Status.String(), Attempt: ps.Attempt, Commit: short(ps.PostCommit)}
		if !ps.StartedAt.IsZero() {
			end := ps.CompletedAt
			if end.IsZero() {
				end = now
			}
			if d := end.Sub(ps.StartedAt).Round(time.Second); !end.IsZero() && d > 0 {
				wp.DurationSeconds = d.Seconds()
			}
		}
		if i == s.Progress.CurrentPhase && ps.Status != state.PhaseCompleted {
			wp.ReviewIteration = s.Progress.ReviewIteration
		}
		for _, tid := range ph.TaskIDs {
			t, _ := s.Plan.Task(tid)
			// A checkpoint without task states (older ones) gives every
			// task its phase's status.
			wt := WatchTask{ID: tid, Title: t.Title, Status: ps.Status.String()}
			if t.Type != state.TypeNone {
				wt.Type = t.Type.String()
			}
			for _, ts := range ps.Tasks {
				if ts.TaskID == tid {
					wt.Status = ts.Status.String()
				}
			}
			wp.Tasks = append(wp.Tasks, wt)
		}
		v.Phases = append(v.Phases, wp)
	}
	return v
}

// writePhaseTree draws the phases of a view and their tasks with status
// marks, then the phase's time, attempt (from the second), review
// iteration and commit.
func writePhaseTree(w io.Writer, phases []WatchPhase) {
	for _, p := range phases {
		st, _ := parsePhaseStatus(p.Status)
		var notes []string
		if p.DurationSeconds > 0 {
			notes = append(notes, (time.Duration(p.DurationSeconds) * time.Second).String())
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
		fmt.Fprintf(w, "Phase %d%s: %s %s%s\n", p.Number, phaseKind(p.Tasks), mark(st), statusWord(st), extra)
		for i, t := range p.Tasks {
			branch := "├──"
			if i == len(p.Tasks)-1 {
				branch = "└──"
			}
			ts, _ := parsePhaseStatus(t.Status)
			typ := ""
			if t.Type != "" {
				typ = "[" + t.Type + "] "
			}
			fmt.Fprintf(w, "  %s %s %s%s %s\n", branch, mark(ts), typ, t.ID, t.Title)
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
	v := treeViewOf(s, s.Status, now)
	writeRunHeading(w, v, false)
	writePhaseTree(w, v.Phases)
}

// phaseKind names the types of the phase's typed tasks: " (test)", or
// " (test+impl)" for a phase that mixes them; "" when none is typed.
func phaseKind(ts []WatchTask) string {
	var kinds []string
	for _, t := range ts {
		if t.Type != "" && !slices.Contains(kinds, t.Type) {
			kinds = append(kinds, t.Type)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return " (" + strings.Join(kinds, "+") + ")"
}

// Marks of the phase tree.
const (
	markDone    = "✓"
	markRunning = "●"
	markPending = "○"
	markFailed  = "✗"
)

func mark(st state.PhaseStatus) string {
	switch st {
	case state.PhaseCompleted:
		return markDone
	case state.PhaseRunning, state.PhaseRetrying:
		return markRunning
	case state.PhaseFailed:
		return markFailed
	}
	return markPending
}

func statusWord(st state.PhaseStatus) string {
	w := st.String()
	return strings.ToUpper(w[:1]) + w[1:]
}

func short(sha string) string { return sha[:min(7, len(sha))] }

func parsePhaseStatus(s string) (state.PhaseStatus, error) {
	var st state.PhaseStatus
	err := st.UnmarshalText([]byte(s))
	return st, err
}
