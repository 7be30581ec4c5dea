package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func (a *app) storyCommand() *ucli.Command {
	return &ucli.Command{
		Name:         "story",
		Usage:        "read a run's Task Story",
		Subcommands:  []*ucli.Command{a.storyShowCommand()},
		Action:       groupAction,
		OnUsageError: onUsageError,
	}
}

func (a *app) storyShowCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "show",
		Usage:     "print phase N's full Task Story records, as expand_context returns them (the newest run without RUN)",
		ArgsUsage: "[RUN] --phase N",
		Description: "Prints every decision record of phase N (each session's decisions and their\n" +
			"reasons, commands, methods, dependencies, requirements, recommendations and\n" +
			"summary, and what its reviews said), in order: the text the llm driver's\n" +
			"expand_context tool returns, for CLI agents and people (seed 004's escape\n" +
			"hatch). It reads the run's work tree, or once that is gone the run's commits.",
		Flags: localGlobals(
			&ucli.Uint64Flag{Name: "phase", EnvVars: []string{"GAFFER_PHASE"}, Usage: "the phase (1-based)"},
		),
		OnUsageError: onUsageError,
		Action: func(c *ucli.Context) error {
			ar, err := parseArgs(c)
			if err != nil {
				return err
			}
			n, err := ar.Uint64("phase")
			if err != nil {
				return err
			}
			if n == 0 {
				return usageErrorf("story show needs --phase N, the phase whose records to print (1 for the first)")
			}
			return withService(c, a.io, true, func(svc host.Service, cmd func(...string) string) error {
				rs, err := svc.Status(c.Context, host.RunRequest{RunID: ar.run})
				if err != nil {
					return err
				}
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				repo, err := workspace.Open(g.Repo)
				if err != nil {
					return exitf(ExitPrecondition, "open repository %s: %w", g.Repo, err)
				}
				return StoryShow(c.Context, a.io.Out, repo, rs.Snapshot, int(n), cmd)
			})
		},
	}
}

// StoryShow writes the decision records of phase n of a run (1-based) as
// agent.PhaseRecords renders them for expand_context: from the run's work
// tree (the records of a phase still running included), or, when that is
// gone, from the newest of its commits that holds them. A phase the run
// does not have, or whose records nothing holds, is exit 8 naming the fix.
func StoryShow(ctx context.Context, w io.Writer, repo *workspace.Repo, snap graph.Snapshot[state.ExecutionState], n int, cmd func(...string) string) error {
	id, st := snap.RunID, snap.State
	phases := st.Progress.Phases
	switch {
	case len(phases) == 0:
		return exitf(ExitPrecondition, "run %s has no phases yet (%s): its story starts with phase 1 (see %s)", id, runStatus(snap), cmd("status", id))
	case n > len(phases):
		return exitf(ExitPrecondition, "run %s has %s: --phase takes 1 to %d", id, plural(len(phases), "phase"), len(phases))
	}
	label := path.Join(st.Run.ExecDir, "story")
	text, ok, err := storyOnDisk(repo, st, label, n)
	if err != nil {
		return err
	}
	if !ok {
		if text, ok, err = storyInCommits(ctx, repo, st, label, n); err != nil {
			return err
		}
	}
	if !ok {
		return exitf(ExitPrecondition, "run %s: phase %d's records are neither in its work tree nor in a commit of its work (the tree was removed before the phase was committed); %s shows what the run kept", id, n, cmd("status", id))
	}
	_, err = io.WriteString(w, text)
	return err
}

// storyOnDisk renders phase n's records from the run's work tree (the
// repository's for a run in place); false when the tree or its story
// directory is not there. A story directory reached through a link is
// refused, and links in it are no records.
func storyOnDisk(repo *workspace.Repo, st state.ExecutionState, label string, n int) (string, bool, error) {
	tree := st.Run.WorkTree
	if tree == "" {
		tree = repo.Root()
	}
	if !filepath.IsAbs(tree) {
		return "", false, nil // a run submitted to another host's serve
	}
	dir := filepath.Join(tree, filepath.FromSlash(label))
	if fi, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return "", false, nil
	}
	if err := workspace.CheckBeneath(tree, label); err != nil {
		return "", false, exitf(ExitPrecondition, "run %s: the story directory %s is not the run's own: %w", st.Run.ID, label, err)
	}
	text, err := agent.PhaseRecords(dir, label, n, "")
	if err != nil {
		return "", false, fmt.Errorf("run %s: %w", st.Run.ID, err)
	}
	return text, true, nil
}

// storyInCommits renders phase n's records from the newest commit of the
// run's work that has the story directory: its branch's tip, then its
// phase commits from the last down to n's. false when none has it.
func storyInCommits(ctx context.Context, repo *workspace.Repo, st state.ExecutionState, label string, n int) (string, bool, error) {
	var revs []string
	if st.Run.WorkTree != "" {
		revs = append(revs, "refs/heads/"+host.RunBranch(st.Run.ID))
	}
	for i := len(st.Progress.Phases) - 1; i >= n-1; i-- {
		if c := st.Progress.Phases[i].PostCommit; c != "" {
			revs = append(revs, c)
		}
	}
	for _, rev := range revs {
		all, err := repo.FilesIn(ctx, rev, label)
		if err != nil || len(all) == 0 {
			continue // a branch deleted, a commit before the story
		}
		var names []string
		for _, f := range all {
			if agent.IsPhaseRecord(f, n) {
				names = append(names, f)
			}
		}
		text, err := agent.RenderRecords(label, n, "", names, func(f string) ([]byte, error) {
			b, ok, err := repo.FileAt(ctx, rev, path.Join(label, f))
			if err == nil && !ok {
				err = fmt.Errorf("%s: %w", f, fs.ErrNotExist)
			}
			return b, err
		})
		if err != nil {
			return "", false, fmt.Errorf("run %s: %w", st.Run.ID, err)
		}
		return text, true, nil
	}
	return "", false, nil
}
