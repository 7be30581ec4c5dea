package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
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

// Cancel marks a run cancelled with a checkpoint that routes it to END —
// through restore_user_changes when the run put the user's uncommitted
// changes aside (--allow-dirty): those are put back here, on top of what
// the run left in the work tree, unless another process holds the work
// tree (then `gaffer resume RUN` does it later).
func Cancel(ctx context.Context, e *env, runID string) error {
	id, snap, err := e.unfinished(ctx, runID, "to cancel")
	if err != nil {
		return err
	}
	after, err := e.runner.UpdateState(ctx, id, snap.State.WithStatus(state.RunCancelled), graph.START)
	if err != nil {
		return e.runError(ctx, id, err)
	}
	fmt.Fprintf(e.io.Out, "Run %s cancelled.\n", id)
	if !after.State.Stash.Pending() {
		return nil
	}
	unlock, err := e.lockWorkTree(id)
	if err != nil {
		// The run is cancelled all the same; the changes wait, safe in the ref.
		fmt.Fprintf(e.io.Out, "Your uncommitted changes stay in %s%s until the work tree is free (%v); then: %s\n",
			workspace.StashRefPrefix, id, err, e.cmd("resume", id))
		return nil
	}
	defer unlock()
	res, err := e.runner.Resume(ctx, id)
	if err != nil {
		return e.runError(ctx, id, err)
	}
	if l := userChangesLine(res.State); l != "" {
		fmt.Fprintln(e.io.Out, l)
	}
	return nil
}

// userChangesLine is the one line that says the user's uncommitted
// changes of a --allow-dirty run are back, naming (up to 10 of) the paths
// the run changed too; "" for a run that put none aside.
func userChangesLine(s state.ExecutionState) string {
	switch {
	case s.Stash.Commit == "":
		return ""
	case !s.Stash.Restored && !s.Status.Terminal():
		return fmt.Sprintf("Your uncommitted changes are kept in %s%s until the run ends.", workspace.StashRefPrefix, s.Run.ID)
	case !s.Stash.Restored:
		return fmt.Sprintf("Your uncommitted changes are kept in %s%s; gaffer resume %s puts them back.", workspace.StashRefPrefix, s.Run.ID, s.Run.ID)
	case len(s.Stash.Overlap) == 0:
		return "Your uncommitted changes are back in the work tree and the index, as they were."
	}
	paths := s.Stash.Overlap
	more := ""
	if len(paths) > 10 {
		paths, more = paths[:10], fmt.Sprintf(" and %d more", len(paths)-10)
	}
	return fmt.Sprintf("Your uncommitted changes are back; the run also changed %s%s: your version is in the work tree, the run's in its commits.",
		strings.Join(paths, ", "), more)
}
