package nodes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// ErrOutsideEdits is matched (errors.Is) by an *OutsideEditsError.
var ErrOutsideEdits = errors.New("nodes: files changed outside the agent's session")

// OutsideEditsError stops a run whose work tree changed after the phase's
// agent session ended and before its review or commit: someone (the user,
// an editor, a formatter) edited, created or deleted files the session
// did not leave that way. gaffer refuses rather than warns: the commit
// would sign those edits as the agent's work (Gaffer-Run trailers), the
// reviewer would judge them as the agent's, and a rejected review's reset
// would delete them. Nothing is changed; the run resumes (reviewing
// again) once the files are as the session left them (Fixes says how,
// path by path), or the user cancels the run.
type OutsideEditsError struct {
	Phase int      // 1-based
	Paths []string // sorted
	// Fixes has, for each path, the command that puts the session's
	// version back: git cat-file of the blob it left, rm, or git checkout
	// of HEAD's version.
	Fixes map[string]string
}

func (e *OutsideEditsError) Error() string {
	paths, more := e.Paths, ""
	if len(paths) > 10 {
		paths, more = paths[:10], fmt.Sprintf(" and %d more", len(e.Paths)-10)
	}
	var fixes []string
	for _, p := range paths {
		fixes = append(fixes, e.Fixes[p])
	}
	return fmt.Sprintf("phase %d: changed outside the agent's session after it ended: %s%s; "+
		"gaffer commits only the agent's work, so the run stops here. Keep your version elsewhere, "+
		"put the agent's back (%s) and resume the run, or cancel it",
		e.Phase, strings.Join(paths, ", "), more, strings.Join(fixes, "; "))
}

// Is makes errors.Is(err, ErrOutsideEdits) true.
func (e *OutsideEditsError) Is(target error) bool { return target == ErrOutsideEdits }

// changedPaths lists the paths the work tree changed against HEAD, except
// the execution directory and the user's untracked files of the phase.
// It also says which of them are untracked.
func (w *workflow) changedPaths(ctx context.Context, s state.ExecutionState, ps state.PhaseState) ([]string, map[string]bool, error) {
	repo, err := w.repo(s)
	if err != nil {
		return nil, nil, err
	}
	keep := keepList(s, ps)
	st, err := repo.StatusOutside(ctx, keep) // what is under keep is left out below anyway
	if err != nil {
		return nil, nil, fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
	}
	untracked := map[string]bool{}
	for _, p := range st.Untracked {
		untracked[p] = true
	}
	var out []string
	for _, l := range [][]string{st.Modified, st.Added, st.Deleted, st.Untracked} {
		for _, p := range l {
			if !under(p, keep) && !strings.HasSuffix(p, "/") {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), untracked, nil
}

// recordWritten fingerprints what the session left (storing each
// version, so that it can be put back) into ps.Written.
func (w *workflow) recordWritten(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.PhaseState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return ps, err
	}
	paths, _, err := w.changedPaths(ctx, s, ps)
	if err != nil {
		return ps, err
	}
	fp, err := repo.Fingerprint(ctx, paths, true)
	if err != nil {
		return ps, fmt.Errorf("nodes: phase %d: record what the session wrote: %w", ps.Index+1, err)
	}
	ps.Written = fp
	if head, err := repo.Head(ctx); err == nil {
		w.note(s, treeNote{kind: noteWritten, phase: ps.Index, attempt: ps.Attempt, iteration: ps.ReviewIteration(), head: head})
	}
	return ps, nil
}

// checkOutsideEdits returns an *OutsideEditsError when the work tree is
// not as the phase's session left it (ps.Written); nil when it is, or
// when nothing was recorded (a state from before Written existed). A
// change to the git settings comes first, as a *GitSettingsError.
func (w *workflow) checkOutsideEdits(ctx context.Context, s state.ExecutionState, ps state.PhaseState) error {
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	if err := w.checkGitSettings(ctx, s, ps); err != nil {
		return err
	}
	if ps.Written == nil {
		return nil
	}
	if head, err := repo.Head(ctx); err == nil {
		if _, ok := w.take(s, noteWritten, ps, head); ok {
			return nil // recorded by this process just now (notes.go)
		}
	}
	now, untracked, err := w.changedPaths(ctx, s, ps)
	if err != nil {
		return err
	}
	paths := slices.Sorted(maps.Keys(ps.Written))
	for _, p := range now {
		if _, ok := ps.Written[p]; !ok {
			paths = append(paths, p)
		}
	}
	fp, err := repo.Fingerprint(ctx, paths, false)
	if err != nil {
		return fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
	}
	var changed []string
	fixes := map[string]string{}
	for _, p := range paths {
		agent, recorded := ps.Written[p]
		cur, ok := fp[p]
		switch {
		case !ok:
			continue // a directory now
		case recorded && cur == agent:
			continue
		}
		fixes[p] = restoreFix(p, agent, recorded, !recorded && untracked[p])
		changed = append(changed, p)
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return &OutsideEditsError{Phase: ps.Index + 1, Paths: changed, Fixes: fixes}
}

// restoreFix is the command that puts path p back as the session left
// it: the blob it wrote (agent, its hash; recorded tells the session
// wrote or removed p), p's removal when the session removed it or p is
// new (neither the session's nor HEAD's), else HEAD's version.
func restoreFix(p, agent string, recorded, isNew bool) string {
	switch {
	case recorded && agent != "":
		return fmt.Sprintf("git cat-file -p %s > %s", agent[:12], p)
	case recorded || isNew:
		return "rm " + p
	default: // the session left it as HEAD has it
		return "git checkout HEAD -- " + p
	}
}

// writtenCheck is checkOutsideEdits at the phase's commit, with no walk
// of its own (workspace.CommitOptions.Check): it refuses, with an
// *OutsideEditsError, a commit of phase ps whose files outside the keep
// list are not what the session left (ps.Written). nil when nothing was
// recorded.
func writtenCheck(s state.ExecutionState, ps state.PhaseState) func(changed []string, file, head func(string) string) error {
	if ps.Written == nil {
		return nil
	}
	keep := keepList(s, ps)
	return func(changed []string, file, head func(string) string) error {
		paths := slices.Sorted(maps.Keys(ps.Written))
		for _, p := range changed {
			if _, ok := ps.Written[p]; !ok && !under(p, keep) {
				paths = append(paths, p)
			}
		}
		var bad []string
		fixes := map[string]string{}
		for _, p := range paths {
			agent, recorded := ps.Written[p]
			if cur := file(p); recorded && cur == agent {
				continue
			}
			fixes[p] = restoreFix(p, agent, recorded, !recorded && head(p) == "")
			bad = append(bad, p)
		}
		if len(bad) == 0 {
			return nil
		}
		slices.Sort(bad)
		return &OutsideEditsError{Phase: ps.Index + 1, Paths: bad, Fixes: fixes}
	}
}
