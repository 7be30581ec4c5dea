package cli

import (
	"context"
	"fmt"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

func cancelCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "cancel",
		Flags:        localGlobals(),
		Usage:        "cancel an unfinished run (the newest without RUN); it cannot be resumed afterwards",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Action: withRun(io, func(ctx context.Context, e *env, a cmdArgs) error {
			return Cancel(ctx, e, a.run)
		}),
	}
}

// Cancel marks a run cancelled with a checkpoint that routes it to END.
func Cancel(ctx context.Context, e *env, runID string) error {
	id, snap, err := e.unfinished(ctx, runID, "to cancel")
	if err != nil {
		return err
	}
	if _, err := e.runner.UpdateState(ctx, id, snap.State.WithStatus(state.RunCancelled), graph.START); err != nil {
		return e.runError(ctx, id, err)
	}
	fmt.Fprintf(e.io.Out, "Run %s cancelled.\n", id)
	return nil
}
