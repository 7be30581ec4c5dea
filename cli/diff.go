package cli

import (
	"context"
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func diffCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "diff",
		Usage:        "show what a run committed, or one phase's change with --phase N (the newest run without RUN)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags: localGlobals(
			&ucli.Uint64Flag{Name: "phase", EnvVars: []string{"GAFFER_PHASE"}, Usage: "the phase (1-based); without it, every phase committed so far"},
			&ucli.BoolFlag{Name: "exec-dir", EnvVars: []string{"GAFFER_EXEC_DIR"}, Usage: "include the execution directory (plan, summaries, records)"},
		),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "exec-dir")
			if err != nil {
				return err
			}
			n, err := a.Uint64("phase")
			if err != nil {
				return err
			}
			return withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				rs, err := svc.Status(c.Context, host.RunRequest{RunID: a.run})
				if err != nil {
					return err
				}
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				repo, err := workspace.Open(g.Repo)
				if err != nil {
					return exitf(ExitPrecondition, "open repository %s: %w", g.Repo, err)
				}
				return Diff(c.Context, io.Out, repo, rs.Snapshot, int(n), a.Bool("exec-dir"))
			})
		},
	}
}

// Diff writes the unified diff of phase n of a run (its pre-phase commit
// to its own commit), or with n 0 of every phase it committed (phase 1's
// pre-phase commit to the last phase commit), after one line naming the
// commits. The execution directory is left out unless execDir. A phase
// that has no commit yet is exit 8, naming its status.
func Diff(ctx context.Context, w io.Writer, repo *workspace.Repo, snap graph.Snapshot[state.ExecutionState], n int, execDir bool) error {
	id := snap.RunID
	phases := snap.State.Progress.Phases
	var from, to, what string
	switch {
	case n > len(phases) || (n > 0 && len(phases) == 0):
		return phaseRange(n, id, len(phases))
	case n > 0:
		ps := phases[n-1]
		if ps.PostCommit == "" {
			return exitf(ExitPrecondition, "phase %d of run %s has no commit yet (%s, attempt %d)", n, id, ps.Status, ps.Attempt)
		}
		from, to, what = ps.PreCommit, ps.PostCommit, fmt.Sprintf("phase %d (attempt %d)", n, ps.Attempt)
	default:
		last := 0
		for i, ps := range phases {
			if ps.PostCommit != "" {
				last = i + 1
			}
		}
		if last == 0 {
			return exitf(ExitPrecondition, "run %s has committed no phase yet (%s)", id, runStatus(snap))
		}
		from, to, what = phases[0].PreCommit, phases[last-1].PostCommit, fmt.Sprintf("phases 1–%d", last)
	}
	var exclude []string
	note := ""
	if !execDir {
		exclude, note = []string{snap.State.Run.ExecDir}, " (without "+snap.State.Run.ExecDir+"; --exec-dir shows it)"
	}
	fmt.Fprintf(w, "# run %s, %s: git diff %s %s%s\n", id, what, short(from), short(to), note)
	if err := repo.Diff(ctx, from, to, exclude, w); err != nil {
		return exitf(ExitPrecondition, "diff of run %s: %w", id, err)
	}
	return nil
}
