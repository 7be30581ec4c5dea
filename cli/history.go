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
		Flags:        localGlobals(),
		Usage:        "list a run's checkpoints, newest first",
		OnUsageError: onUsageError,
		ArgsUsage:    "RUN",
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			if a.run == "" {
				return exitf(ExitUsage, "usage: gaffer history RUN")
			}
			e, err := openEnv(c, io)
			if err != nil {
				return err
			}
			defer e.Close()
			return History(c.Context, e, a.run)
		},
	}
}

// History prints a run's checkpoints: seq, nodes ran, nodes next, time.
func History(ctx context.Context, e *env, runID string) error {
	snaps, err := e.runner.History(ctx, runID, 0)
	if err != nil {
		return e.runError(ctx, runID, err)
	}
	tw := tabwriter.NewWriter(e.io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tRAN\tNEXT\tSTATUS\tTIME")
	for _, s := range snaps {
		next := strings.Join(s.Next, ",")
		if next == "" {
			next = graph.END
		}
		st := s.State.Status.String()
		if s.Interrupt != nil {
			st = state.RunAwaitingApproval.String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", s.Seq, strings.Join(s.Ran, ","), next, st, s.Time.Local().Format(time.DateTime))
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
			e, err := openEnv(c, io)
			if err != nil {
				return err
			}
			defer e.Close()
			return Fork(c.Context, e, a.run, from)
		},
	}
}

// Fork copies checkpoint seq of runID into a new run, with the new run's
// id in its state (its commits carry the new id). The new run is not
// started: `gaffer resume NEW` (or approve) continues it.
func Fork(ctx context.Context, e *env, runID string, seq uint64) error {
	id := newRunID(time.Now())
	snap, err := e.runner.Fork(ctx, runID, seq, id)
	if err != nil {
		return e.runError(ctx, runID, err)
	}
	s := snap.State.Clone()
	s.Run.ID = id
	as := graph.START
	if len(snap.Ran) > 0 {
		as = snap.Ran[len(snap.Ran)-1]
	}
	// A checkpoint waiting for approval has run no node of its own; from
	// START the plan is validated again and approval asked again.
	if _, err := e.runner.UpdateState(ctx, id, s, as); err != nil {
		return fmt.Errorf("fork: set the new run id: %w", err)
	}
	fmt.Fprintf(e.io.Out, "Forked %s at checkpoint %d as %s.\nContinue it with: %s\n", runID, seq, id, e.cmd("resume", id))
	return nil
}
