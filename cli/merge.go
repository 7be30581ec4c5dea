package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func mergeCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "merge",
		Usage:        "take a finished run's work (its branch gaffer/RUN) into your current branch",
		OnUsageError: onUsageError,
		ArgsUsage:    "RUN",
		Flags: localGlobals(
			&ucli.BoolFlag{Name: "dry-run", EnvVars: []string{"GAFFER_DRY_RUN"}, Usage: "say what the merge would do, and change nothing"},
		),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "dry-run")
			if err != nil {
				return err
			}
			if a.run == "" {
				return exitf(ExitUsage, "usage: gaffer merge RUN [--dry-run] (gaffer list shows the runs)")
			}
			return withService(c, io, true, func(svc host.Service, cmd func(...string) string) error {
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				rs, err := svc.Status(c.Context, host.RunRequest{RunID: a.run})
				if err != nil {
					// A run deleted with its unmerged work kept: its branch
					// is merged as a finished run's.
					if host.CodeOf(err) == host.Refused && host.CheckRunID(a.run) == nil {
						if repo, oerr := workspace.Open(g.Repo); oerr == nil && repo.HasBranch(c.Context, host.RunBranch(a.run)) {
							if in, herr := hasRun(c.Context, svc, a.run); herr == nil && !in {
								return MergeDeleted(c.Context, io.Out, repo, a.run, a.Bool("dry-run"), cmd)
							}
						}
					}
					return err
				}
				repo, err := workspace.Open(g.Repo)
				if err != nil {
					return exitf(ExitPrecondition, "open repository %s: %w", g.Repo, err)
				}
				return Merge(c.Context, io.Out, repo, rs.Snapshot, a.Bool("dry-run"), cmd)
			})
		},
	}
}

// Merge takes the work of a finished run, its branch gaffer/RUN, into the
// branch checked out in repo, or with dryRun says what that would do. It
// fast-forwards when the branch has no commit of its own, and otherwise
// makes one merge commit. An unfinished run, a run that worked in place,
// a missing branch, a merge, rebase, cherry-pick or bisect of the user's
// under way, uncommitted changes to tracked files, files git does not
// track (ignored ones too) where the merge would write, and a conflict
// are refused in one line with exit 8, before anything is changed; cmd
// formats the gaffer commands it suggests.
func Merge(ctx context.Context, w io.Writer, repo *workspace.Repo, snap graph.Snapshot[state.ExecutionState], dryRun bool, cmd func(...string) string) error {
	id := snap.RunID
	st := runStatus(snap)
	if !st.Terminal() {
		return exitf(ExitPrecondition, "run %s is %s: merge it once it has finished (%s)", id, st, cmd("status", id))
	}
	if snap.State.Run.WorkTree == "" {
		fmt.Fprintf(w, "Nothing to merge: run %s worked in place, so its commits are on the branch it ran on already.\n", id)
		return nil
	}
	note := ""
	if st != state.RunCompleted {
		note = fmt.Sprintf("Run %s is %s: %s holds the phases that passed their review.", id, st, host.RunBranch(id))
	}
	return mergeBranch(ctx, w, repo, id, mergeMessage(snap), note, "the run and its branch", dryRun, cmd)
}

// MergeDeleted is Merge of run id deleted from the store with its branch
// kept (it held unmerged work): the branch is merged as a finished run's.
func MergeDeleted(ctx context.Context, w io.Writer, repo *workspace.Repo, id string, dryRun bool, cmd func(...string) string) error {
	note := fmt.Sprintf("Run %s was deleted; its branch %s kept its work.", id, host.RunBranch(id))
	return mergeBranch(ctx, w, repo, id, "Merge gaffer run "+id, note, "the branch", dryRun, cmd)
}

// mergeBranch merges run id's branch (Merge), saying note first when
// there is work to merge; what names what `gaffer delete RUN` removes.
func mergeBranch(ctx context.Context, w io.Writer, repo *workspace.Repo, id, message, note, what string, dryRun bool, cmd func(...string) string) error {
	branch := host.RunBranch(id)
	var (
		p   workspace.MergePlan
		err error
	)
	if dryRun {
		p, err = repo.PlanMerge(ctx, branch)
	} else {
		p, err = repo.MergeBranch(ctx, branch, message)
	}
	if err := mergeRefusal(err, id, branch, p, cmd); err != nil {
		return err
	}
	into := cmp.Or(p.Into, "HEAD")
	if p.UpToDate() {
		fmt.Fprintf(w, "Nothing to merge: %s has every commit of %s already.\n", into, branch)
		return nil
	}
	if note != "" {
		fmt.Fprintln(w, note)
	}
	commits := plural(p.Commits, "commit")
	switch {
	case dryRun && p.FastForward:
		fmt.Fprintf(w, "Would fast-forward %s to %s: %s, %s..%s. Nothing was changed; %s does it.\n", into, branch, commits, short(p.Head), short(p.Tip), cmd("merge", id))
	case dryRun:
		fmt.Fprintf(w, "Would merge %s into %s with a merge commit: %s, no conflict. Nothing was changed; %s does it.\n", branch, into, commits, cmd("merge", id))
	case p.FastForward:
		fmt.Fprintf(w, "Fast-forwarded %s to %s: %s, %s..%s.\n", into, branch, commits, short(p.Head), short(p.Tip))
	default:
		fmt.Fprintf(w, "Merged %s into %s: %s, merge commit %s.\n", branch, into, commits, short(p.Result))
	}
	if !dryRun {
		fmt.Fprintf(w, "The branch stays until you remove it: %s deletes %s.\n", cmd("delete", id), what)
	}
	return nil
}

// hasRun reports whether the store svc serves has run id.
func hasRun(ctx context.Context, svc host.Service, id string) (bool, error) {
	es, err := svc.List(ctx, host.ListRequest{})
	if err != nil {
		return false, err
	}
	for i := range es {
		if es[i].RunID == id {
			return true, nil
		}
	}
	return false, nil
}

// mergeRefusal turns MergeBranch's refusals into one line each, exit 8.
func mergeRefusal(err error, id, branch string, p workspace.MergePlan, cmd func(...string) string) error {
	var de *workspace.DirtyError
	var ce *workspace.MergeConflictError
	var ip *workspace.InProgressError
	var tw *workspace.InTheWayError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, workspace.ErrNoBranch):
		return exitf(ExitPrecondition, "run %s: its branch %s is gone (deleted?): nothing to merge", id, branch)
	case errors.As(err, &de):
		return exitf(ExitPrecondition, "your checkout has uncommitted changes to %s: commit or stash them, then %s", workspace.PathList(de.Paths, 10), cmd("merge", id))
	case errors.As(err, &ce):
		return exitf(ExitPrecondition, "%s conflicts with %s in %s: nothing was changed; merge it yourself with git merge %s", branch, cmp.Or(p.Into, "HEAD"), workspace.PathList(ce.Paths, 10), branch)
	case errors.As(err, &ip):
		return exitf(ExitPrecondition, "a git %s of yours is under way in your checkout: finish it, or end it with %s, then %s (nothing was changed)", ip.Op, ip.Finish(), cmd("merge", id))
	case errors.As(err, &tw):
		return exitf(ExitPrecondition, "files git does not track stand where %s would write (%s): move them aside, then %s (nothing was changed)", branch, tw.Describe(10), cmd("merge", id))
	case errors.Is(err, workspace.ErrDetached):
		return exitf(ExitPrecondition, "HEAD is detached: check out the branch to take run %s's work into, then %s", id, cmd("merge", id))
	}
	return err
}

// mergeMessage is the merge commit's message: the run and its goal's
// first line.
func mergeMessage(snap graph.Snapshot[state.ExecutionState]) string {
	goal, _, _ := strings.Cut(strings.TrimSpace(snap.State.Run.Goal), "\n")
	if r := []rune(goal); len(r) > 60 {
		goal = string(r[:59]) + "…"
	}
	msg := "Merge gaffer run " + snap.RunID
	if goal != "" {
		msg += ": " + goal
	}
	return msg
}
