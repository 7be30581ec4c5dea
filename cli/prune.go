package cli

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/workspace"
)

func pruneCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name: "prune",
		Usage: "remove every finished run from the store but the newest --keep ones (their commits stay in git), " +
			"and the branches and work trees no run owns (a start cut short)",
		OnUsageError: onUsageError,
		Flags: localGlobals(
			&ucli.IntFlag{Name: "keep", Value: 10, EnvVars: []string{"GAFFER_KEEP"}, Usage: "how many of the newest finished runs to keep"},
			&ucli.BoolFlag{Name: "yes", Aliases: []string{"y"}, EnvVars: []string{"GAFFER_YES"}, Usage: "do not ask on a terminal"},
			&ucli.BoolFlag{Name: "branches", EnvVars: []string{"GAFFER_BRANCHES"}, Usage: "also delete run branches with unmerged commits (deleted runs' too), and rescue refs"},
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
			dir, _, err := storeOf(c)
			if err != nil {
				return err
			}
			return Prune(c.Context, l, host.WorkTreesDir(dir), keep, a.Bool("yes") || a.Bool("y"), a.Bool("branches"))
		},
	}
}

// Prune deletes the finished runs of l's store but the newest keep (as
// Delete, which asks first on a terminal unless yes), then removes what
// no run of the store owns (asking first the same way), naming each: the
// work trees under treesDir of no run (a start killed before its first
// checkpoint), and the run branches (gaffer/ID) of no run that hold no
// unmerged work; with branches, those of deleted runs that do, and their
// rescue refs. A branch of no run that is checked out in a work tree
// outside treesDir is left, named, as is one of a deleted run.
func Prune(ctx context.Context, l *local, treesDir string, keep int, yes, branches bool) error {
	es, err := l.List(ctx, host.ListRequest{})
	if err != nil {
		return err
	}
	owned := make(map[string]bool, len(es))
	var old []string
	kept := 0
	for _, r := range host.StatusesOf(es) { // newest first
		owned[r.Snapshot.RunID] = true
		if !deletable(r.Snapshot) {
			continue
		}
		if kept < keep {
			kept++
			continue
		}
		old = append(old, r.Snapshot.RunID)
	}
	// Found first, so that the runs deleted now are not taken for strays.
	s, err := findStrays(ctx, l.Repo(), treesDir, owned, branches)
	if err != nil {
		return err
	}
	if len(old) == 0 {
		fmt.Fprintf(l.io.Out, "Nothing to prune: %s kept.\n", plural(kept, "finished run"))
	} else if err := Delete(ctx, l, old, yes, branches); err != nil {
		return err
	}
	if s.any() && l.io.terminal() && !yes {
		fmt.Fprintf(l.io.Out, "Remove what no run owns, %s? [y/N] ", s.summary())
		line, _ := bufio.NewReader(l.io.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(l.io.Out, "Nothing removed.")
			return nil
		}
	}
	notes, err := s.remove(ctx, l.Repo(), l.cmd)
	for _, n := range notes {
		fmt.Fprintln(l.io.Out, n)
	}
	return err
}

// strays is what no run of a store owns in its repository.
type strays struct {
	trees []string // work trees (or what a cut-short add left of one)
	// branches are run branches of no run that go: their commits are in
	// a branch of the user's, or --branches.
	branches []refPlan
	kept     []string // branches of deleted runs with unmerged work, kept
	held     []string // branches of no run checked out in a work tree, kept
}

func (s strays) any() bool { return len(s.trees)+len(s.branches) > 0 }

// summary names what remove removes, for the question asked first.
func (s strays) summary() string {
	var parts []string
	if len(s.trees) > 0 {
		parts = append(parts, plural(len(s.trees), "work tree"))
	}
	if len(s.branches) > 0 {
		parts = append(parts, branchCount(len(s.branches)))
	}
	return strings.Join(parts, " and ")
}

// findStrays finds what no run in owned has: the work trees under
// treesDir named by no run, and the branches gaffer/ID of no run. A
// branch whose commits are in a branch of the user's goes (with all,
// every one), unless it is checked out in a work tree other than a stray
// one; the others are kept.
func findStrays(ctx context.Context, repo *workspace.Repo, treesDir string, owned map[string]bool, all bool) (strays, error) {
	var s strays
	if repo == nil {
		return s, nil
	}
	trees, err := repo.WorkTreesUnder(treesDir)
	if err != nil {
		return s, err
	}
	strayTree := map[string]bool{}
	for _, t := range trees {
		if id := filepath.Base(t); !owned[id] {
			s.trees = append(s.trees, t)
			strayTree[t] = true
		}
	}
	refs, err := repo.Refs(ctx, "refs/heads/"+host.ForkBranchPrefix)
	if err != nil {
		return s, err
	}
	for _, ref := range refs {
		id := strings.TrimPrefix(ref, "refs/heads/"+host.ForkBranchPrefix)
		if owned[id] || host.CheckRunID(id) != nil {
			continue // a run's, or no run branch of gaffer's (gaffer/a/b)
		}
		branch := host.RunBranch(id)
		merged, err := repo.BranchMerged(ctx, branch, host.ForkBranchPrefix)
		if err != nil {
			return s, err
		}
		if !merged && !all {
			s.kept = append(s.kept, branch)
			continue
		}
		tree, err := repo.CheckedOut(ctx, branch)
		if err != nil {
			return s, err
		}
		if tree != "" && !strayTree[tree] && !strayTree[filepath.Join(treesDir, filepath.Base(tree))] {
			s.held = append(s.held, branch+" (checked out in "+tree+")")
			continue
		}
		// What a start cut short left of its tree (a record of git's
		// named after it, made before its gitdir) goes first.
		if t := filepath.Join(treesDir, id); !strayTree[t] && repo.WorkTreeLeft(t) {
			s.trees = append(s.trees, t)
			strayTree[t] = true
		}
		p := refPlan{id: id, branch: branch, merged: merged, drop: true}
		if p.attempts, err = repo.Refs(ctx, workspace.AttemptRefPrefix+id+"/"); err != nil {
			return s, err
		}
		if all {
			if p.rescues, err = repo.Refs(ctx, workspace.RescueRefPrefix+id+"/"); err != nil {
				return s, err
			}
			p.dropRescues = len(p.rescues) > 0
		}
		s.branches = append(s.branches, p)
	}
	return s, nil
}

// remove removes the stray work trees, then the branches that go, and
// returns a line for each, and one for the branches kept.
func (s strays) remove(ctx context.Context, repo *workspace.Repo, cmd func(...string) string) ([]string, error) {
	var notes []string
	for _, t := range s.trees {
		if err := repo.RemoveWorkTree(ctx, t); err != nil {
			return notes, err
		}
		notes = append(notes, fmt.Sprintf("Removed work tree %s: no run owns it (a start cut short).", t))
	}
	for _, p := range s.branches {
		if err := repo.DeleteBranch(ctx, p.branch); err != nil {
			return notes, err
		}
		if p.merged {
			notes = append(notes, fmt.Sprintf("Deleted branch %s: no run owns it, and its commits are merged.", p.branch))
		} else {
			notes = append(notes, fmt.Sprintf("Deleted branch %s of a deleted run and its unmerged commits (--branches).", p.branch))
		}
		for _, r := range append(slices.Clone(p.rescues), p.attempts...) {
			if err := repo.DeleteRef(ctx, r); err != nil {
				return notes, err
			}
		}
		if len(p.rescues) > 0 {
			notes = append(notes, fmt.Sprintf("Deleted %s of run %s (--branches).", plural(len(p.rescues), "rescue ref"), p.id))
		}
	}
	if len(s.kept) > 0 {
		notes = append(notes, fmt.Sprintf("Kept %s of deleted runs with unmerged work: %s (gaffer list shows them; %s deletes them).",
			branchCount(len(s.kept)), workspace.PathList(s.kept, 5), cmd("prune", "--branches")))
	}
	if len(s.held) > 0 {
		notes = append(notes, fmt.Sprintf("Kept %s of no run, checked out: %s.", branchCount(len(s.held)), strings.Join(s.held, ", ")))
	}
	return notes, nil
}

// branchCount is "1 branch" or "N branches".
func branchCount(n int) string {
	if n == 1 {
		return "1 branch"
	}
	return fmt.Sprintf("%d branches", n)
}
