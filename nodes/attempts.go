package nodes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// maxStatLines bounds the diff stat of a kept attempt in the retry's
// prompt.
const maxStatLines = 20

// attemptName is the name, under workspace.AttemptRefPrefix, of attempt
// ps.Attempt of phase ps: RUN/pN-aM.
func attemptName(s state.ExecutionState, ps state.PhaseState) string {
	return fmt.Sprintf("%s/p%d-a%d", s.Run.ID, ps.Index+1, ps.Attempt)
}

// keepFailed keeps the failed attempt ps.Attempt of phase ps — the work
// tree as its session left it, but for the user's untracked files and
// the execution directory — as a commit on the pre-phase commit under
// workspace.AttemptRefPrefix+RUN/pN-aM, before the reset that starts the
// next attempt throws it away, and returns ps with it as Kept (nil when
// the attempt changed nothing). Its commit is dated one second after
// HEAD, so a step run again after a crash makes the same commit.
func (w *workflow) keepFailed(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.PhaseState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return ps, err
	}
	name := attemptName(s, ps)
	var h string
	err = w.gitOp(repo, func() (err error) {
		h, err = repo.KeepAttempt(ctx, name, fmt.Sprintf("gaffer: failed attempt %d of phase %d of run %s\n", ps.Attempt, ps.Index+1, s.Run.ID),
			keepList(s, ps), time.Time{})
		return err
	})
	if err != nil {
		return ps, fmt.Errorf("nodes: phase %d: keep failed attempt %d: %w", ps.Index+1, ps.Attempt, err)
	}
	if h == "" {
		ps.Kept = nil
		return ps, nil
	}
	stats, err := repo.DiffStat(ctx, ps.PreCommit, h)
	if err != nil {
		return ps, fmt.Errorf("nodes: phase %d: keep failed attempt %d: %w", ps.Index+1, ps.Attempt, err)
	}
	ps.Kept = &state.KeptAttempt{Attempt: ps.Attempt, Ref: workspace.AttemptRefPrefix + name, Commit: h, Stat: renderStat(stats)}
	return ps, nil
}

// renderStat is a diff stat, one "path (+added -deleted)" a line, the
// first maxStatLines of them.
func renderStat(stats []workspace.FileStat) string {
	var b strings.Builder
	for i, f := range stats {
		if i == maxStatLines {
			fmt.Fprintf(&b, "… and %d more\n", len(stats)-i)
			break
		}
		if f.Binary {
			fmt.Fprintf(&b, "%s (binary)\n", f.Path)
			continue
		}
		fmt.Fprintf(&b, "%s (+%d -%d)\n", f.Path, f.Added, f.Deleted)
	}
	return b.String()
}

// keptContext is the retry prompt's section on the failed attempt kept
// for it, or "" when there is none.
func keptContext(ps state.PhaseState) string {
	k := ps.Kept
	if k == nil || k.Attempt >= ps.Attempt {
		return ""
	}
	return fmt.Sprintf("\n### What attempt %d changed\n\nIt is kept as commit %s (`%s`): `git show %s` shows its diff, "+
		"`git diff HEAD %s -- PATH` one file against this tree. Take what was right; do not repeat what failed.\n\n%s",
		k.Attempt, short(k.Commit), k.Ref, k.Ref, k.Ref, k.Stat)
}
