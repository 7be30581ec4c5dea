package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
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

// Delete deletes the finished runs ids from the store with what they
// leave in git (host.GitOps.DeleteRuns: everything is checked before
// anything is removed), after asking on a terminal unless yes, and says
// what it deleted and kept.
func Delete(ctx context.Context, l *local, ids []string, yes, branches bool) error {
	req := host.DeleteRequest{RunIDs: ids, Branches: branches}
	if l.io.terminal() && !yes {
		req.Check = true
		d, err := l.DeleteRuns(ctx, req)
		if err != nil {
			return err
		}
		req.Check = false
		if !d.Already {
			fmt.Fprintf(l.io.Out, "Delete %s from the store, about %s? Their commits stay in git. [y/N] ", deletedWhat(ids), plural(d.Checkpoints, "checkpoint"))
			line, _ := bufio.NewReader(l.io.In).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(l.io.Out, "Nothing deleted.")
				return nil
			}
		}
	}
	d, err := l.DeleteRuns(ctx, req)
	if err != nil {
		return err
	}
	if d.Already {
		fmt.Fprintf(l.io.Out, "Run %s was deleted already.\n", ids[0])
	} else {
		fmt.Fprintf(l.io.Out, "Deleted %s.\n", deletedWhat(ids))
	}
	writeLines(l.io.Out, d.Notes)
	return nil
}

// deletedWhat names the runs ids a delete deletes.
func deletedWhat(ids []string) string {
	if len(ids) > 1 {
		return fmt.Sprintf("%d finished runs (%s)", len(ids), strings.Join(ids, ", "))
	}
	return fmt.Sprintf("run %s", ids[0])
}
