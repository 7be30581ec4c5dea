package cli

import (
	"context"
	"fmt"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	ucli "github.com/urfave/cli/v2"
)

func resumeCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "resume",
		Flags:        localGlobals(paceFlag()),
		Usage:        "continue a killed or interrupted run from its last checkpoint (no flags needed)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Action: withRun(io, func(ctx context.Context, e *env, a cmdArgs) error {
			return Resume(ctx, e, a.run)
		}),
	}
}

// Resume continues a run (the newest unfinished one when runID is "")
// with the drivers rebuilt from its stored config. A run waiting for
// approval is asked on a terminal, or left waiting with the commands
// printed; a run waiting for recovery's question is left waiting with the
// question and its `approve --decision` commands printed.
func Resume(ctx context.Context, e *env, runID string) error {
	id, snap, err := e.resumable(ctx, runID)
	if err != nil {
		return err
	}
	if err := checkKeys(snap.State.Config, e.io.Keys.getenv); err != nil {
		return err
	}
	var ask answerer
	if e.io.terminal() {
		ask = e.askTerminal()
	}
	if snap.Interrupt != nil && snap.Interrupt.Node == nodes.NodeRecover {
		// Recovery's question is answered with approve --decision, not
		// at the plan-approval prompt.
		return e.question(id, snap.Interrupt.Payload)
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
