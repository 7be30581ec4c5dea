package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	ucli "github.com/urfave/cli/v2"
)

func historyCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "history",
		Flags:        localGlobals(&ucli.BoolFlag{Name: "json", EnvVars: []string{"GAFFER_JSON"}, Usage: "print JSON"}),
		Usage:        "list a run's checkpoints, newest first (the newest run without RUN)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "json")
			if err != nil {
				return err
			}
			return withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				views, err := svc.History(c.Context, host.RunRequest{RunID: a.run})
				if err != nil {
					return err
				}
				return writeHistory(io.Out, views, a.Bool("json"))
			})
		},
	}
}

// CheckpointView is one checkpoint as `history --json` shows it.
type CheckpointView = host.Checkpoint

// writeHistory prints a run's checkpoints, newest first: seq, nodes ran,
// nodes next, status, time (with asJSON, CheckpointViews).
func writeHistory(w io.Writer, views []CheckpointView, asJSON bool) error {
	if asJSON {
		return writeJSON(w, views)
	}
	zone := displayZone(time.Now())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SEQ\tRAN\tNEXT\tSTATUS\tTIME (%s)\n", zone)
	for _, v := range views {
		next := strings.Join(v.Next, ",")
		if next == "" {
			next = graph.END
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.Seq, strings.Join(v.Ran, ","), next, v.Status, v.Time.In(zone).Format(time.DateTime))
	}
	return tw.Flush()
}
