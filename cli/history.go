package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
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
			if dir, err := missingStore(c, io); err != nil {
				return err
			} else if dir != "" {
				return noRuns(dir)
			}
			e, err := openEnv(c, io)
			if err != nil {
				return err
			}
			defer e.Close()
			return History(c.Context, e, a.run, a.Bool("json"))
		},
	}
}

// CheckpointView is one checkpoint as `history --json` shows it.
type CheckpointView struct {
	Seq       uint64    `json:"seq"`
	Parent    uint64    `json:"parent"`
	Step      int       `json:"step"`
	Ran       []string  `json:"ran"`
	Next      []string  `json:"next"` // empty when the run is done
	Status    string    `json:"status"`
	Interrupt string    `json:"interrupt,omitempty"` // the node waiting on an interrupt (the approval)
	Time      time.Time `json:"time"`
}

// History prints a run's checkpoints, newest first: seq, nodes ran, nodes
// next, status, time (with asJSON, CheckpointViews). Without runID it
// takes the newest run.
func History(ctx context.Context, e *env, runID string, asJSON bool) error {
	runID, err := e.pick(ctx, runID, "at all", func(state.RunStatus) bool { return true })
	if err != nil {
		return err
	}
	// A page of checkpoints at a time: a long run's full states do not
	// fit in memory at once, and the views need only their status.
	var views []CheckpointView
	err = e.runner.EachCheckpoint(ctx, runID, func(s graph.Snapshot[state.ExecutionState]) error {
		v := CheckpointView{Seq: s.Seq, Parent: s.Parent, Step: s.Step, Ran: nonNil(s.Ran), Next: nonNil(s.Next),
			Status: s.State.Status.String(), Time: s.Time}
		if s.Interrupt != nil {
			v.Status = state.RunAwaitingApproval.String()
			v.Interrupt = s.Interrupt.Node
		}
		views = append(views, v)
		return nil
	})
	if err != nil {
		return e.runError(ctx, runID, err)
	}
	if asJSON {
		return writeJSON(e.io.Out, views)
	}
	zone := displayZone(time.Now())
	tw := tabwriter.NewWriter(e.io.Out, 0, 4, 2, ' ', 0)
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

func forkCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "fork",
		Usage:        "start a new run from a past checkpoint of RUN (see history)",
		OnUsageError: onUsageError,
		ArgsUsage:    "RUN",
		Flags:        localGlobals(&ucli.Uint64Flag{Name: "from", EnvVars: []string{"GAFFER_FROM"}, Usage: "the checkpoint's seq (required)"}),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			from, err := a.Uint64("from")
			if err != nil {
				return err
			}
			if a.run == "" || from == 0 {
				return exitf(ExitUsage, "usage: gaffer fork RUN --from SEQ")
			}
			if err := needStore(c, io); err != nil {
				return err
			}
			e, err := openEnv(c, io)
			if err != nil {
				return err
			}
			defer e.Close()
			return Fork(c.Context, e, a.run, from)
		},
	}
}
