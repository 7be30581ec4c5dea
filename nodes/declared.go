package nodes

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Declared files (seed 003's scope manifest, allowed_paths): a task's
// files: line says what it creates or changes. After each developer
// session the changes are compared with the declared files of the tasks
// it did; both lists go to the reviewer's prompt and an event, and with
// strict_files (state.RunConfig.StrictFiles) either, when not empty, is
// a failed attempt.

// declaredMatch reports whether changed path p is declared by d: the same
// path, a file under d when d is a directory ("pkg/" or "pkg"), or a
// match of d as a path.Match pattern ("cmd/*.go").
func declaredMatch(d, p string) bool {
	d = strings.TrimPrefix(path.Clean(strings.TrimPrefix(d, "./")), "./")
	if d == "." || d == p || strings.HasPrefix(p, d+"/") {
		return true
	}
	ok, err := path.Match(d, p)
	return err == nil && ok
}

// FilesCheck is what a session changed against what its tasks declared.
type FilesCheck struct {
	Undeclared []string // changed paths no task declared, sorted
	Untouched  []string // declared files nothing changed, in the plan's order
}

// Empty reports whether the session kept to its declared files.
func (c FilesCheck) Empty() bool { return len(c.Undeclared) == 0 && len(c.Untouched) == 0 }

// CheckDeclared compares the changed paths with the files the tasks
// declare. Tasks that declare no files leave nothing to check: the zero
// FilesCheck (a plan that never says its files is not held to them; a
// task with none in a phase whose other tasks declare some has its
// changes listed as undeclared).
func CheckDeclared(tasks []state.Task, changed []string) FilesCheck {
	var declared []string
	for _, t := range tasks {
		declared = append(declared, t.Files...)
	}
	if len(declared) == 0 {
		return FilesCheck{}
	}
	var c FilesCheck
	for _, p := range changed {
		if !slices.ContainsFunc(declared, func(d string) bool { return declaredMatch(d, p) }) {
			c.Undeclared = append(c.Undeclared, p)
		}
	}
	slices.Sort(c.Undeclared)
	for _, d := range declared {
		if slices.Contains(c.Untouched, d) {
			continue
		}
		if !slices.ContainsFunc(changed, func(p string) bool { return declaredMatch(d, p) }) {
			c.Untouched = append(c.Untouched, d)
		}
	}
	return c
}

// String tells the check's findings on one line, or "" when there are
// none.
func (c FilesCheck) String() string {
	var parts []string
	if len(c.Undeclared) > 0 {
		parts = append(parts, "changed files no task declares: "+strings.Join(c.Undeclared, ", "))
	}
	if len(c.Untouched) > 0 {
		parts = append(parts, "declared files not created or changed: "+strings.Join(c.Untouched, ", "))
	}
	return strings.Join(parts, "; ")
}

// strictFilesError is the failed attempt's error under strict_files.
func strictFilesError(c FilesCheck) string {
	return "strict_files: the session did not keep to its tasks' declared files: " + c.String() +
		". Change only the files the tasks' files: lines name, and create or change each of them"
}

// checkDeclared checks the session of phase ps, whose changed paths are
// changed, against its tasks' declared files: it emits EventDeclaredFiles
// when they differ, and under strict_files returns the attempt's error
// ("" when there is none).
func checkDeclared(ctx context.Context, s state.ExecutionState, ps state.PhaseState, tasks []state.Task, changed []string) string {
	return declaredError(ctx, s, ps.Index+1, ps.Attempt, 0, tasks, changed)
}

// declaredError is checkDeclared for the session of attempt attempt of
// phase (1-based) and lane (1-based; 0 for a phase of one lane).
func declaredError(ctx context.Context, s state.ExecutionState, phase, attempt, lane int, tasks []state.Task, changed []string) string {
	c := CheckDeclared(tasks, changed)
	if c.Empty() {
		return ""
	}
	graph.Emit(ctx, events.EventDeclaredFiles, events.DeclaredFiles{Phase: phase, Attempt: attempt, Lane: lane,
		Undeclared: c.Undeclared, Untouched: c.Untouched, Strict: s.Config.StrictFiles})
	if !s.Config.StrictFiles {
		return ""
	}
	return strictFilesError(c)
}

// reviewerFilesNote is the reviewer prompt's word on the declared files,
// or "" when the session kept to them.
func reviewerFilesNote(c FilesCheck) string {
	if c.Empty() {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nThe changes and the tasks' declared files (files: lines) differ. Judge whether each difference is right:\n")
	if len(c.Undeclared) > 0 {
		fmt.Fprintf(&b, "- changed, but no task declares them: %s\n", strings.Join(c.Undeclared, ", "))
	}
	if len(c.Untouched) > 0 {
		fmt.Fprintf(&b, "- declared, but not created or changed: %s\n", strings.Join(c.Untouched, ", "))
	}
	return b.String()
}

// checkLaneDeclared checks lane l (0-based k) of phase ps, done at
// l.Head, against its own tasks' declared files: the lane's changes are
// its work since the pre-phase commit (a lane run again after a review
// goes on from its own earlier work), or, for a lane run again on the
// others' combined work after a conflict, since that; the execution
// directory's are left out.
func (w *workflow) checkLaneDeclared(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, ps state.PhaseState, k int, l state.LaneProgress) (string, error) {
	var tasks []state.Task
	for _, id := range l.Tasks {
		if t, ok := s.Plan.Task(id); ok {
			tasks = append(tasks, t)
		}
	}
	if CheckDeclared(tasks, nil).Empty() {
		return "", nil // no task of the lane declares a file
	}
	base := ps.PreCommit
	if len(l.Conflict) > 0 {
		base = l.Base
	}
	stats, err := repo.DiffStat(ctx, base, l.Head)
	if err != nil {
		return "", fmt.Errorf("nodes: phase %d lane %d: declared files: %w", ps.Index+1, k+1, err)
	}
	var changed []string
	for _, f := range stats {
		if !under(f.Path, []string{s.Run.ExecDir}) {
			changed = append(changed, f.Path)
		}
	}
	return declaredError(ctx, s, ps.Index+1, l.Attempt, k+1, tasks, changed), nil
}
