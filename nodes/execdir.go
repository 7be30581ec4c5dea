package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// The execution directory's files are rendered from the state and git
// alone — no clock, no durations — so that two runs with the same run id
// of the same plan on the same repository commit the same bytes (see
// doc.go).

func planPath(s state.ExecutionState) string { return path.Join(s.Run.ExecDir, "plan.md") }
func statePath(s state.ExecutionState) string {
	return path.Join(s.Run.ExecDir, "execution-state.json")
}
func phaseDir(s state.ExecutionState, i int) string {
	return path.Join(s.Run.ExecDir, fmt.Sprintf("phase-%d", i+1))
}
func feedbackPath(s state.ExecutionState, i int) string {
	return path.Join(phaseDir(s, i), "review-feedback.md")
}
func summaryPath(s state.ExecutionState, i int) string {
	return path.Join(phaseDir(s, i), "summary.md")
}

// feedbackBody renders a rejected review: the comments (an agent's failure
// in full) and the items to fix; with all, the items deferred or rejected
// too (review-feedback.md keeps them for the record; the retry prompt
// does not carry them).
func feedbackBody(ps state.PhaseState, all bool) string {
	var b strings.Builder
	r := ps.Review
	if r == nil {
		return ""
	}
	if c := strings.TrimSpace(r.Comments); c != "" {
		b.WriteString(c + "\n")
	}
	for _, g := range []struct {
		v     state.Verdict
		title string
	}{{state.VerdictImplement, "To fix now"}, {state.VerdictDefer, "Deferred (out of scope; do not act on it)"}, {state.VerdictReject, "Rejected (do not act on it)"}} {
		if g.v != state.VerdictImplement && !all {
			continue
		}
		var lines []string
		for _, it := range r.Items {
			if it.Verdict == g.v {
				l := "- " + it.Text
				if it.Reason != "" {
					l += " (" + it.Reason + ")"
				}
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s\n", g.title, strings.Join(lines, "\n"))
		}
	}
	return b.String()
}

// RenderFeedback is phase-N/review-feedback.md for a rejected phase.
func RenderFeedback(s state.ExecutionState, ps state.PhaseState) string {
	what := fmt.Sprintf("Attempt %d was rejected; attempt %d starts from the pre-phase commit.", ps.Attempt-1, ps.Attempt)
	if s.Plan.Mode == state.ModeTask {
		what = fmt.Sprintf("Review %d of attempt %d rejected the change; the same session fixes it.", ps.ReviewIteration(), ps.Attempt)
	}
	return fmt.Sprintf("# Phase %d: review feedback\n\n%s\n\n%s", ps.Index+1, what, feedbackBody(ps, true))
}

// RenderSummary is phase-N/summary.md for a committed phase: its tasks,
// the files it changed, and the git commands that restore the details.
func RenderSummary(s state.ExecutionState, ps state.PhaseState, stats []workspace.FileStat) (string, error) {
	tasks, err := s.Plan.PhaseTasks(ps.Index)
	if err != nil {
		return "", fmt.Errorf("nodes: summary: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Phase %d summary\n\nCompleted in attempt %d.\n\nTasks:\n", ps.Index+1, ps.Attempt)
	for _, t := range tasks {
		typ := ""
		if t.Type != state.TypeNone {
			typ = "[" + t.Type.String() + "] "
		}
		fmt.Fprintf(&b, "- %sTask %s: %s\n", typ, t.ID, t.Title)
	}
	b.WriteString("\nFiles changed (added, deleted, path):\n")
	var tests []string
	for _, f := range stats {
		if strings.HasPrefix(f.Path, s.Run.ExecDir+"/") {
			continue
		}
		fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(f.String(), "\t", " "))
		if strings.Contains(strings.ToLower(path.Base(f.Path)), "test") {
			tests = append(tests, f.Path)
		}
	}
	if len(tests) == 0 {
		tests = []string{"none"}
	}
	fmt.Fprintf(&b, "\nTest files: %s\n", strings.Join(tests, ", "))
	if u := s.TotalUsage(); u != (state.Usage{}) {
		fmt.Fprintf(&b, "\nCost of the run so far: $%.4f (%d input, %d output, %d cached tokens)\n",
			u.CostUSD, u.InputTokens, u.OutputTokens, u.CachedTokens)
	}
	fmt.Fprintf(&b, "\nRestore the details:\n- Full diff: `git diff %s..%s`\n- Commit: `git show %s`\n", ps.PreCommit, ps.PostCommit, ps.PostCommit)
	return b.String(), nil
}

// execState is the committed execution-state.json: the run's id and
// progress without times, durations or usage.
type execState struct {
	RunID    string      `json:"run_id"`
	Goal     string      `json:"goal"`
	ExecDir  string      `json:"exec_dir"`
	Mode     string      `json:"mode"`
	Status   string      `json:"status"`
	Revision int         `json:"plan_revision"`
	Current  int         `json:"current_phase"`
	Phases   []execPhase `json:"phases"`
}

type execPhase struct {
	Number     int      `json:"number"`
	Tasks      []string `json:"tasks"`
	Status     string   `json:"status"`
	Attempts   int      `json:"attempts"`
	PreCommit  string   `json:"pre_commit,omitempty"`
	PostCommit string   `json:"post_commit,omitempty"`
	Summary    string   `json:"summary,omitempty"`
}

// RenderState is execution-state.json.
func RenderState(s state.ExecutionState) ([]byte, error) {
	es := execState{RunID: s.Run.ID, Goal: s.Run.Goal, ExecDir: s.Run.ExecDir, Mode: s.Plan.Mode.String(), Status: s.Status.String(),
		Revision: s.Progress.PlanRevision, Current: s.Progress.CurrentPhase() + 1, Phases: []execPhase{}}
	for i, ph := range s.Plan.Phases {
		ep := execPhase{Number: i + 1, Tasks: ph.TaskIDs, Status: state.PhasePending.String()}
		if i < len(s.Progress.Phases) {
			ps := s.Progress.Phases[i]
			ep.Status, ep.Attempts, ep.PreCommit, ep.PostCommit, ep.Summary = ps.Status.String(), ps.Attempt, ps.PreCommit, ps.PostCommit, ps.SummaryPath
		}
		es.Phases = append(es.Phases, ep)
	}
	b, err := json.MarshalIndent(es, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("nodes: execution-state.json: %w", err)
	}
	return append(b, '\n'), nil
}

// write writes one execution-directory file (slash path relative to the
// work tree) crash-safely, beneath the work tree without following a
// symbolic link: one an agent planted on the way (phase-1, story, the
// directory itself) stops the run with a *workspace.LinkError naming it.
func (w *workflow) write(s state.ExecutionState, rel, content string) error {
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	if err := workspace.WriteFileBeneath(repo.Root(), rel, []byte(content), 0o644); err != nil {
		return fmt.Errorf("nodes: write %s: %w", rel, err)
	}
	return nil
}

// cleanTemps removes the temporary files (atomicfile.IsTemp) a killed
// process left in the execution directory: ResetTo keeps that directory, so nobody else would.
// An execution directory reached through a symbolic link is refused
// (workspace.CheckBeneath); links inside it are not followed.
func (w *workflow) cleanTemps(s state.ExecutionState) error {
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	if err := workspace.CheckBeneath(repo.Root(), s.Run.ExecDir); err != nil {
		return fmt.Errorf("nodes: clean %s: %w", s.Run.ExecDir, err)
	}
	root := filepath.Join(repo.Root(), filepath.FromSlash(s.Run.ExecDir))
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if n := d.Name(); !d.IsDir() && atomicfile.IsTemp(n) {
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nodes: clean %s: %w", s.Run.ExecDir, err)
	}
	return nil
}

// writeRecord writes plan.md and execution-state.json for s.
func (w *workflow) writeRecord(s state.ExecutionState) error {
	if err := w.cleanTemps(s); err != nil {
		return err
	}
	if err := w.write(s, planPath(s), s.Plan.Markdown); err != nil {
		return err
	}
	js, err := RenderState(s)
	if err != nil {
		return err
	}
	return w.write(s, statePath(s), string(js))
}

// writeSummary writes phase-N/summary.md for a committed phase, with the
// story so far (sofar, "" for none) at its end, and returns ps with
// SummaryPath set (and, with keep on a run that publishes, Summary: see
// writePendingSummary).
func (w *workflow) writeSummary(ctx context.Context, s state.ExecutionState, ps state.PhaseState, sofar string, keep bool) (state.PhaseState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return ps, err
	}
	stats, err := repo.DiffStat(ctx, ps.PreCommit, ps.PostCommit)
	if err != nil {
		return ps, fmt.Errorf("nodes: phase %d diff stat: %w", ps.Index+1, err)
	}
	md, err := RenderSummary(s, ps, stats)
	if err != nil {
		return ps, err
	}
	if sofar != "" {
		md += "\n" + sofar
	}
	p := summaryPath(s, ps.Index)
	if err := w.write(s, p, md); err != nil {
		return ps, err
	}
	ps.SummaryPath = p
	if keep && w.publishes(s) {
		ps.Summary = md
	}
	return ps, nil
}

// writePendingSummary writes again, before phase ps's agent starts, the
// previous phase's summary.md that no commit has taken yet, when the
// state keeps it (a run on a shared remote): another host may have
// written it, in its own clone, before this host took the run over. It
// goes in this run's execution directory: a fork's state names its
// parent's (SummaryPath), where none of the fork's work goes.
func (w *workflow) writePendingSummary(s state.ExecutionState, ps state.PhaseState) error {
	if ps.Index == 0 {
		return nil
	}
	prev, err := s.PhaseState(ps.Index - 1)
	if err != nil || prev.Summary == "" || prev.SummaryPath == "" {
		return nil
	}
	return w.write(s, summaryPath(s, prev.Index), prev.Summary)
}

// committedSummary returns s with the previous phase's pending summary
// (PhaseState.Summary) cleared: phase ps's commit carries it.
func committedSummary(s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, error) {
	if ps.Index == 0 {
		return s, nil
	}
	prev, err := s.PhaseState(ps.Index - 1)
	if err != nil || prev.Summary == "" {
		return s, nil
	}
	prev.Summary = ""
	return s.WithPhaseState(prev)
}
