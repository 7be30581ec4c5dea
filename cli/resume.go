package cli

import (
	"context"
	"fmt"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

func resumeCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "resume",
		Flags:        localGlobals(),
		Usage:        "continue a killed or interrupted run from its last checkpoint (no flags needed)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			e, err := openEnv(c, io)
			if err != nil {
				return err
			}
			defer e.Close()
			return Resume(c.Context, e, a.run)
		},
	}
}

// Resume continues a run (the newest unfinished one when runID is "")
// with the drivers rebuilt from its stored config. A run waiting for
// approval is asked on a terminal, or left waiting with the commands
// printed.
func Resume(ctx context.Context, e *env, runID string) error {
	id, err := e.pick(ctx, runID, "to resume", func(s state.RunStatus) bool { return !s.Terminal() })
	if err != nil {
		return err
	}
	snap, err := e.runner.State(ctx, id)
	if err != nil {
		return e.runError(ctx, id, err)
	}
	if snap.State.Status.Terminal() {
		return exitf(ExitPrecondition, "run %s has already finished: %s", id, snap.State.Status)
	}
	var ask answerer
	if e.io.terminal() {
		ask = e.askTerminal()
	}
	if snap.Interrupt != nil {
		if ask == nil {
			return e.awaiting(id)
		}
		fmt.Fprintf(e.io.Out, "Run %s is waiting for approval.\n", id)
		return e.drive(ctx, id, ask, func() (graphResult, error) {
			return graphResult{Status: graph.Interrupted, State: snap.State, Seq: snap.Seq, Interrupt: snap.Interrupt}, nil
		})
	}
	fmt.Fprintf(e.io.Out, "Resuming run %s from checkpoint %d (next: %v)\n", id, snap.Seq, snap.Next)
	return e.drive(ctx, id, ask, func() (graphResult, error) { return e.runner.Resume(ctx, id) })
}
