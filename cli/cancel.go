package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
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
// tree (then `gaffer resume RUN` does it later). Before that, the
// unfinished phase's own changes are undone (nodes.DiscardPhase), so the
// tree is back at the last good commit, as after a halt.
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
	markTranscriptEnd(e.storeDir, id)
	phase, running := runningPhase(after.State)
	if !running && !after.State.Stash.Pending() {
		return nil
	}
	unlock, err := e.lockWorkTree(id)
	if err != nil {
		// The run is cancelled all the same; the tree waits.
		if running {
			fmt.Fprintf(e.io.Out, "Phase %d's unfinished changes stay in the work tree, which is not free (%v).\n", phase, err)
		}
		if after.State.Stash.Pending() {
			fmt.Fprintf(e.io.Out, "Your uncommitted changes stay in %s%s until the work tree is free (%v); then: %s\n",
				workspace.StashRefPrefix, id, err, e.cmd("resume", id))
		}
		return nil
	}
	defer unlock()
	if running {
		// Before the user's changes come back: the reset must not touch them.
		pre, err := nodes.DiscardPhase(ctx, e.repo, after.State, func(msg string) { fmt.Fprintln(e.io.Out, msg) })
		switch {
		case err != nil:
			fmt.Fprintf(e.io.Out, "Phase %d's unfinished changes were left in the work tree: %v\n", phase, err)
		case pre != "":
			fmt.Fprintf(e.io.Out, "Phase %d's unfinished changes were undone: the work tree is back at %s, the last good commit.\n", phase, short(pre))
		}
	}
	if !after.State.Stash.Pending() {
		return nil
	}
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

// runningPhase returns the 1-based number of s's phase that was running.
func runningPhase(s state.ExecutionState) (int, bool) {
	i := s.Progress.CurrentPhase
	if i < 0 || i >= len(s.Progress.Phases) || s.Progress.Phases[i].Status != state.PhaseRunning {
		return 0, false
	}
	return i + 1, true
}
