package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
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
			return Prune(c.Context, l, keep, a.Bool("yes") || a.Bool("y"), a.Bool("branches"))
		},
	}
}

// Prune deletes the finished runs of l's store but the newest keep (as
// Delete, which asks first on a terminal unless yes), then removes what
// no run of the store owns (host.GitOps.Prune), asking first the same
// way, and names each.
func Prune(ctx context.Context, l *local, keep int, yes, branches bool) error {
	// Found first, so that the runs deleted now are not taken for strays.
	p, err := l.Prune(ctx, host.PruneRequest{Keep: keep, Branches: branches})
	if err != nil {
		return err
	}
	if len(p.Old) == 0 {
		fmt.Fprintf(l.io.Out, "Nothing to prune: %s kept.\n", plural(p.Kept, "finished run"))
	} else if err := Delete(ctx, l, p.Old, yes, branches); err != nil {
		return err
	}
	if p.Summary != "" && l.io.terminal() && !yes {
		fmt.Fprintf(l.io.Out, "Remove what no run owns, %s? [y/N] ", p.Summary)
		line, _ := bufio.NewReader(l.io.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(l.io.Out, "Nothing removed.")
			return nil
		}
	}
	r, err := l.Prune(ctx, host.PruneRequest{Keep: keep, Branches: branches, Remove: true, Owned: p.Old})
	writeLines(l.io.Out, r.Notes)
	return err
}
