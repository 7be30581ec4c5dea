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
			return Cancel(c.Context, e, a.run)
		},
	}
}

// Cancel marks a run cancelled with a checkpoint that routes it to END.
func Cancel(ctx context.Context, e *env, runID string) error {
	id, err := e.pick(ctx, runID, "to cancel", func(s state.RunStatus) bool { return !s.Terminal() })
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
	if _, err := e.runner.UpdateState(ctx, id, snap.State.WithStatus(state.RunCancelled), graph.START); err != nil {
		return e.runError(ctx, id, err)
	}
	fmt.Fprintf(e.io.Out, "Run %s cancelled.\n", id)
	return nil
}
