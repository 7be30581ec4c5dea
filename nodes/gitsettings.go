package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// ErrGitSettings is matched (errors.Is) by a *GitSettingsError.
var ErrGitSettings = errors.New("nodes: the repository's git configuration or hooks changed during the phase")

// GitSettingsError stops a run whose git directory's configuration or
// hooks, or whose work tree's .git file, changed after its phase was
// prepared: an agent (or anyone) that sets core.fsmonitor, a filter or a
// hook there, or points .git at a repository of its own, gets the next git
// command, the user's own `git status` included, to run its program
// outside the sandbox. gaffer refuses rather than commits, as for a file changed
// outside the session (OutsideEditsError). Nothing is changed; the run
// resumes once the files are as they were (Fixes says how), or the user
// cancels it.
type GitSettingsError struct {
	Phase int      // 1-based
	Paths []string // the files changed, sorted
	// Fixes has, for each path, the command that puts the phase's
	// version back, or removes a file the phase did not have.
	Fixes map[string]string
}

func (e *GitSettingsError) Error() string {
	var fixes []string
	for _, p := range e.Paths {
		fixes = append(fixes, e.Fixes[p])
	}
	return fmt.Sprintf("phase %d: the repository's git settings changed during the run: %s; "+
		"an agent could make git run its own program there, so the run stops here. Check them, "+
		"put the phase's version back (%s) and resume the run, or cancel it",
		e.Phase, strings.Join(e.Paths, ", "), strings.Join(fixes, "; "))
}

// Is makes errors.Is(err, ErrGitSettings) true.
func (e *GitSettingsError) Is(target error) bool { return target == ErrGitSettings }

// recordGitSettings notes the git settings of s's repository in ps (see
// state.PhaseState.GitSettings).
func recordGitSettings(ctx context.Context, repo *workspace.Repo, ps state.PhaseState) (state.PhaseState, error) {
	st, err := repo.GitSettings(ctx)
	if err != nil {
		return ps, fmt.Errorf("nodes: prepare phase %d: %w", ps.Index+1, err)
	}
	ps.GitSettings = st
	return ps, nil
}

// checkGitSettings returns a *GitSettingsError when the git settings of
// s's repository are not those recorded when ps was prepared; nil when
// they are, when nothing was recorded (a state from before), or when they
// were recorded in another clone of the repository (another host).
func (w *workflow) checkGitSettings(ctx context.Context, s state.ExecutionState, ps state.PhaseState) error {
	if ps.GitSettings == nil {
		return nil
	}
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	now, err := repo.GitSettings(ctx)
	if err != nil {
		return fmt.Errorf("nodes: phase %d: %w", ps.Index+1, err)
	}
	if ps.GitSettings[workspace.GitDirKey] != now[workspace.GitDirKey] {
		return nil // recorded in another clone (another host prepared the phase)
	}
	if _, ok := ps.GitSettings[workspace.DotGitCheckedKey]; !ok {
		// Recorded by a gaffer that did not note the work tree's .git.
		delete(now, workspace.DotGitKey)
		delete(now, workspace.DotGitCheckedKey)
	}
	changed := workspace.ChangedSettings(ps.GitSettings, now)
	if len(changed) == 0 {
		return nil
	}
	fixes := map[string]string{}
	for _, k := range changed {
		path := repo.GitSettingsPath(k)
		if h := ps.GitSettings[k]; h != "" {
			fixes[k] = fmt.Sprintf("git cat-file -p %s > %s", h[:12], path)
		} else {
			fixes[k] = "rm " + path
		}
	}
	return &GitSettingsError{Phase: ps.Index + 1, Paths: changed, Fixes: fixes}
}
