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

// deletable reports whether a run may leave the store: it is finished and
// has no uncommitted changes of the user's still to put back.
func deletable(snap graph.Snapshot[state.ExecutionState]) bool {
	return runStatus(snap).Terminal() && !snap.State.Stash.Pending()
}

// Delete removes the finished runs ids from the store, with their
// transcripts, after asking on a terminal (unless yes). Everything is
// checked before anything is removed, and a refusal is one line with
// exit 8: an unfinished run (cancel it first), one whose user's changes
// are still to be put back (resume it first), and a branch that is to go
// but is checked out in a work tree. Each run's branch goes too once its
// commits are in a branch of the user's (outside gaffer/), and its stash
// ref once the changes it kept are back; an unmerged branch and the
// rescue refs go only with branches, and are otherwise kept with a line
// saying so. A single id of a run deleted already whose branch or rescue
// refs were kept is deleteKept's.
func Delete(ctx context.Context, l *local, ids []string, yes, branches bool) error {
	repo := l.Repo()
	total := 0
	plans := make([]refPlan, 0, len(ids))
	for _, id := range ids {
		rs, err := l.Status(ctx, host.RunRequest{RunID: id})
		if err != nil {
			if len(ids) == 1 && host.CodeOf(err) == host.Refused {
				if kept, kerr := keptOfDeleted(ctx, l, repo, id); kerr == nil && kept {
					return deleteKept(ctx, l, repo, id, branches)
				}
			}
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
		p, err := planRunRefs(ctx, repo, id, branches, true, l.cmd)
		if err != nil {
			return err
		}
		plans = append(plans, p)
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
	for i, id := range ids {
		if err := l.Delete(ctx, host.RunRequest{RunID: id}); err != nil {
			return err
		}
		n, err := plans[i].apply(ctx, repo, l.cmd)
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

// keptOfDeleted reports whether run id is not in the store but its
// branch or rescue refs are in repo: a run deleted with its unmerged work
// kept.
func keptOfDeleted(ctx context.Context, l *local, repo *workspace.Repo, id string) (bool, error) {
	if repo == nil || host.CheckRunID(id) != nil {
		return false, nil
	}
	if inStore, err := hasRun(ctx, l.Host, id); err != nil || inStore {
		return false, err
	}
	refs, err := repo.Refs(ctx, "refs/heads/"+host.RunBranch(id))
	if err != nil {
		return false, err
	}
	rescues, err := repo.Refs(ctx, workspace.RescueRefPrefix+id+"/")
	if err != nil {
		return false, err
	}
	return len(refs)+len(rescues) > 0, nil
}

// deleteKept removes what run id, deleted already, kept in git: its
// branch once it is merged, or with branches; its rescue refs with
// branches. An unmerged branch without branches is refused (exit 8)
// with the two commands that end it.
func deleteKept(ctx context.Context, l *local, repo *workspace.Repo, id string, branches bool) error {
	p, err := planRunRefs(ctx, repo, id, branches, false, l.cmd)
	if err != nil {
		return err
	}
	if !p.drop && !p.dropRescues {
		if p.branch != "" {
			return exitf(ExitPrecondition, "run %s was deleted already; its branch %s holds unmerged work: %s takes it into your branch, %s deletes it",
				id, p.branch, l.cmd("merge", id), l.cmd("delete", id, "--branches"))
		}
		return exitf(ExitPrecondition, "run %s was deleted already; its %s stay: %s deletes them", id, plural(len(p.rescues), "rescue ref"), l.cmd("delete", id, "--branches"))
	}
	notes, err := p.apply(ctx, repo, l.cmd)
	if err != nil {
		return err
	}
	fmt.Fprintf(l.io.Out, "Run %s was deleted already.\n", id)
	for _, n := range notes {
		fmt.Fprintln(l.io.Out, n)
	}
	return nil
}

// refPlan is what deleting a run does to its git refs, decided (and
// checked) before anything changes.
type refPlan struct {
	id          string
	branch      string // gaffer/ID; "" when there is none
	merged      bool   // its commits are in a branch of the user's
	drop        bool   // the branch goes: merged, or --branches
	stash       bool   // the stash ref goes (a run in the store, its changes back)
	rescues     []string
	dropRescues bool
	attempts    []string // its failed attempts' refs: they go with the run
}

// planRunRefs decides what deleting run id does to its refs: its branch
// goes when merged or with all, its stash ref with stash, its rescue refs
// with all. A branch that is to go but is checked out in a work tree is
// refused here, exit 8, as git would refuse it half-way.
func planRunRefs(ctx context.Context, repo *workspace.Repo, id string, all, stash bool, cmd func(...string) string) (refPlan, error) {
	p := refPlan{id: id, stash: stash}
	if repo == nil {
		return p, nil
	}
	branch := host.RunBranch(id)
	merged, err := repo.BranchMerged(ctx, branch, host.ForkBranchPrefix)
	switch {
	case errors.Is(err, workspace.ErrNoBranch):
	case err != nil:
		return p, err
	default:
		p.branch, p.merged, p.drop = branch, merged, merged || all
	}
	if p.drop {
		tree, err := repo.CheckedOut(ctx, branch)
		if err != nil {
			return p, err
		}
		if tree != "" {
			return p, exitf(ExitPrecondition, "branch %s is checked out in %s: check out another branch there, then %s (nothing was deleted)",
				branch, tree, cmd(deleteArgs(id, all)...))
		}
	}
	if p.rescues, err = repo.Refs(ctx, workspace.RescueRefPrefix+id+"/"); err != nil {
		return p, err
	}
	p.dropRescues = all && len(p.rescues) > 0
	if p.attempts, err = repo.Refs(ctx, workspace.AttemptRefPrefix+id+"/"); err != nil {
		return p, err
	}
	return p, nil
}

func deleteArgs(id string, all bool) []string {
	if all {
		return []string{"delete", id, "--branches"}
	}
	return []string{"delete", id}
}

// apply carries out p and returns one line per branch or set of rescue
// refs removed or kept.
func (p refPlan) apply(ctx context.Context, repo *workspace.Repo, cmd func(...string) string) ([]string, error) {
	if repo == nil {
		return nil, nil
	}
	var notes []string
	switch {
	case p.branch == "":
	case p.drop:
		if err := repo.DeleteBranch(ctx, p.branch); err != nil {
			return nil, err
		}
		if p.merged {
			notes = append(notes, fmt.Sprintf("Deleted branch %s: its commits are merged.", p.branch))
		} else {
			notes = append(notes, fmt.Sprintf("Deleted branch %s and its unmerged commits (--branches).", p.branch))
		}
	default:
		notes = append(notes, fmt.Sprintf("Kept branch %s: it holds unmerged work (%s takes it into your branch; %s deletes it).",
			p.branch, cmd("merge", p.id), cmd("delete", p.id, "--branches")))
	}
	if p.stash {
		if err := repo.DeleteRef(ctx, workspace.StashRefPrefix+p.id); err != nil {
			return nil, err
		}
	}
	for _, r := range p.attempts { // the run's own record of what failed: it goes with the run, unannounced
		if err := repo.DeleteRef(ctx, r); err != nil {
			return nil, err
		}
	}
	switch {
	case len(p.rescues) == 0:
	case p.dropRescues:
		for _, r := range p.rescues {
			if err := repo.DeleteRef(ctx, r); err != nil {
				return nil, err
			}
		}
		notes = append(notes, fmt.Sprintf("Deleted %s of run %s (--branches).", plural(len(p.rescues), "rescue ref"), p.id))
	default:
		notes = append(notes, fmt.Sprintf("Kept %s of run %s: changes a reset put aside (git stash apply %s; --branches deletes them).", plural(len(p.rescues), "rescue ref"), p.id, p.rescues[0]))
	}
	return notes, nil
}
