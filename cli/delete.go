package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func deleteCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "delete",
		Usage:        "remove a finished run from the store (its checkpoints and transcripts; its commits stay in git)",
		OnUsageError: onUsageError,
		ArgsUsage:    "RUN",
		Flags: localGlobals(&ucli.BoolFlag{Name: "yes", Aliases: []string{"y"}, EnvVars: []string{"GAFFER_YES"}, Usage: "do not ask on a terminal"},
			&ucli.BoolFlag{Name: "branches", EnvVars: []string{"GAFFER_BRANCHES"}, Usage: "also delete run branches with unmerged commits, and rescue refs"}),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "yes", "y", "branches")
			if err != nil {
				return err
			}
			if a.run == "" {
				return exitf(ExitUsage, "usage: gaffer delete RUN")
			}
			if err := needStore(c); err != nil {
				return err
			}
			l, err := openHost(c, io, hostOptions{kind: commandKind(c)})
			if err != nil {
				return err
			}
			defer l.Close()
			return Delete(c.Context, l, []string{a.run}, a.Bool("yes") || a.Bool("y"), a.Bool("branches"))
		},
	}
}

func pruneCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "prune",
		Usage:        "remove every finished run from the store but the newest --keep ones (their commits stay in git)",
		OnUsageError: onUsageError,
		Flags: localGlobals(
			&ucli.IntFlag{Name: "keep", Value: 10, EnvVars: []string{"GAFFER_KEEP"}, Usage: "how many of the newest finished runs to keep"},
			&ucli.BoolFlag{Name: "yes", Aliases: []string{"y"}, EnvVars: []string{"GAFFER_YES"}, Usage: "do not ask on a terminal"},
			&ucli.BoolFlag{Name: "branches", EnvVars: []string{"GAFFER_BRANCHES"}, Usage: "also delete run branches with unmerged commits, and rescue refs"},
		),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "yes", "y", "branches")
			if err != nil {
				return err
			}
			if a.run != "" {
				return exitf(ExitUsage, "unexpected argument %q (prune takes no RUN; see gaffer delete)", a.run)
			}
			keep := c.Int("keep")
			if v, ok := a.extra["keep"]; ok {
				if _, err := fmt.Sscan(v, &keep); err != nil {
					return exitf(ExitUsage, "--keep: %q is not a number", v)
				}
			}
			if keep < 0 {
				return exitf(ExitUsage, "--keep %d: want 0 or more", keep)
			}
			if dir, err := missingStore(c); err != nil || dir != "" {
				if err == nil {
					fmt.Fprintln(io.Out, noRunsLine(dir))
				}
				return err
			}
			l, err := openHost(c, io, hostOptions{kind: commandKind(c)})
			if err != nil {
				return err
			}
			defer l.Close()
			es, err := l.List(c.Context, host.ListRequest{})
			if err != nil {
				return err
			}
			var old []string
			kept := 0
			for _, r := range host.StatusesOf(es) { // newest first
				if !deletable(r.Snapshot) {
					continue
				}
				if kept < keep {
					kept++
					continue
				}
				old = append(old, r.Snapshot.RunID)
			}
			if len(old) == 0 {
				fmt.Fprintf(l.io.Out, "Nothing to prune: %s kept.\n", plural(kept, "finished run"))
				return nil
			}
			return Delete(c.Context, l, old, a.Bool("yes") || a.Bool("y"), a.Bool("branches"))
		},
	}
}

// deletable reports whether a run may leave the store: it is finished and
// has no uncommitted changes of the user's still to put back.
func deletable(snap graph.Snapshot[state.ExecutionState]) bool {
	return runStatus(snap).Terminal() && !snap.State.Stash.Pending()
}

// Delete removes the finished runs ids from the store, with their
// transcripts, after asking on a terminal (unless yes). An unfinished run
// (cancel it first), or one whose user's changes are still to be put back
// (resume it first), is refused with exit 8 before anything is removed.
// Each run's branch goes too once its commits are merged (in HEAD or in a
// branch outside gaffer/), and its stash ref once the changes it kept are
// back; an unmerged branch and the rescue refs go only with branches, and
// are otherwise kept with a line saying so.
func Delete(ctx context.Context, l *local, ids []string, yes, branches bool) error {
	total := 0
	for _, id := range ids {
		rs, err := l.Status(ctx, host.RunRequest{RunID: id})
		if err != nil {
			return err
		}
		snap := rs.Snapshot
		switch st := runStatus(snap); {
		case !st.Terminal():
			return exitf(ExitPrecondition, "run %s is %s; cancel it first: %s", id, st, l.cmd("cancel", id))
		case snap.State.Stash.Pending():
			return exitf(ExitPrecondition, "run %s still keeps your uncommitted changes; put them back first: %s", id, l.cmd("resume", id))
		}
		total += int(snap.Seq)
	}
	what := fmt.Sprintf("run %s", ids[0])
	if len(ids) > 1 {
		what = fmt.Sprintf("%d finished runs (%s)", len(ids), strings.Join(ids, ", "))
	}
	if l.io.terminal() && !yes {
		fmt.Fprintf(l.io.Out, "Delete %s from the store, about %s? Their commits stay in git. [y/N] ", what, plural(total, "checkpoint"))
		line, _ := bufio.NewReader(l.io.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(l.io.Out, "Nothing deleted.")
			return nil
		}
	}
	var notes []string
	for _, id := range ids {
		if err := l.Delete(ctx, host.RunRequest{RunID: id}); err != nil {
			return err
		}
		n, err := dropRunRefs(ctx, l.Repo(), id, branches, l.cmd)
		if err != nil {
			return err
		}
		notes = append(notes, n...)
	}
	fmt.Fprintf(l.io.Out, "Deleted %s.\n", what)
	for _, n := range notes {
		fmt.Fprintln(l.io.Out, n)
	}
	return nil
}

// dropRunRefs removes run id's git refs that hold nothing unmerged: its
// branch gaffer/ID when every commit of it is in another branch, and its
// stash ref (Delete is called only once the stash is back). With all it
// removes the unmerged branch and the rescue refs too. It returns one
// line per branch removed or kept.
func dropRunRefs(ctx context.Context, repo *workspace.Repo, id string, all bool, cmd func(...string) string) ([]string, error) {
	if repo == nil {
		return nil, nil
	}
	var notes []string
	branch := host.RunBranch(id)
	merged, err := repo.BranchMerged(ctx, branch, host.ForkBranchPrefix)
	switch {
	case errors.Is(err, workspace.ErrNoBranch):
	case err != nil:
		return nil, err
	case merged || all:
		if err := repo.DeleteRef(ctx, "refs/heads/"+branch); err != nil {
			return nil, err
		}
		if merged {
			notes = append(notes, fmt.Sprintf("Deleted branch %s: its commits are merged.", branch))
		} else {
			notes = append(notes, fmt.Sprintf("Deleted branch %s and its unmerged commits (--branches).", branch))
		}
	default:
		notes = append(notes, fmt.Sprintf("Kept branch %s: it holds unmerged work (%s takes it into your branch; --branches deletes it).", branch, cmd("merge", id)))
	}
	if err := repo.DeleteRef(ctx, workspace.StashRefPrefix+id); err != nil {
		return nil, err
	}
	rescues, err := repo.Refs(ctx, workspace.RescueRefPrefix+id+"/")
	if err != nil {
		return nil, err
	}
	switch {
	case len(rescues) == 0:
	case all:
		for _, r := range rescues {
			if err := repo.DeleteRef(ctx, r); err != nil {
				return nil, err
			}
		}
		notes = append(notes, fmt.Sprintf("Deleted %s of run %s (--branches).", plural(len(rescues), "rescue ref"), id))
	default:
		notes = append(notes, fmt.Sprintf("Kept %s of run %s: changes a reset put aside (git stash apply %s; --branches deletes them).", plural(len(rescues), "rescue ref"), id, rescues[0]))
	}
	return notes, nil
}
