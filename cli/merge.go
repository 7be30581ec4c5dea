package cli

import (
	"fmt"
	stdio "io"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
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
			return withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				m, err := svc.Merge(c.Context, host.MergeRequest{RunID: a.run, DryRun: a.Bool("dry-run"), Repo: g.Repo})
				if err != nil {
					return err
				}
				writeLines(io.Out, m.Lines)
				return nil
			})
		},
	}
}

// writeLines writes each of lines on its own line.
func writeLines(w stdio.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
