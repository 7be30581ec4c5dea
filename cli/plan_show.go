package cli

import (
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// writePlanText writes the whole plan for a person: a heading, the goal,
// the phases with their tasks, then the plan's text as written (task
// bodies, files, dependencies).
func writePlanText(w io.Writer, s state.ExecutionState) {
	fmt.Fprintf(w, "Plan of run %s (revision %d, %s mode, %s in %s)\n", s.Run.ID, s.Progress.PlanRevision, s.Plan.Mode,
		plural(len(s.Plan.Tasks), "task"), plural(len(s.Plan.Phases), "phase"))
	fmt.Fprintf(w, "Goal: %s\n\n", s.Run.Goal)
	writePlanPhases(w, s.Plan)
	fmt.Fprintf(w, "\n%s\n", strings.Repeat("─", 60))
	fmt.Fprintf(w, "%s\n", strings.TrimRight(s.Plan.Markdown, "\n"))
}

func (a *app) planShowCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "show",
		Usage:     "print a run's stored plan in full (the newest run without RUN)",
		ArgsUsage: "[RUN]",
		Description: "Prints the plan a run works from, as the human approves it: its phases and\n" +
			"tasks, then the plan's whole text (task bodies, files, dependencies). On a\n" +
			"terminal it goes through $PAGER (default: less -FRX).",
		Flags:        localGlobals(&ucli.BoolFlag{Name: "json", EnvVars: []string{"GAFFER_JSON"}, Usage: "print JSON"}),
		OnUsageError: onUsageError,
		// Read through the process holding the store, when one does (a
		// run waiting on its terminal for this very plan's approval).
		Action: func(c *ucli.Context) error {
			ar, err := parseArgs(c, "json")
			if err != nil {
				return err
			}
			return withService(c, a.io, true, func(svc host.Service, cmd func(...string) string) error {
				rs, err := svc.Status(c.Context, host.RunRequest{RunID: ar.run})
				if err != nil {
					return err
				}
				return PlanShow(a.io, cmd, rs.Snapshot, ar.Bool("json"))
			})
		},
	}
}

// PlanShow prints runID's stored plan (the newest run's without runID):
// paged on a terminal, as JSON with asJSON. A run whose architect has not
// written a plan yet is ExitPrecondition.
func PlanShow(io IO, cmd func(...string) string, snap graph.Snapshot[state.ExecutionState], asJSON bool) error {
	id := snap.RunID
	v := runview.PlanOf(snap.State)
	if v == nil {
		return exitf(ExitPrecondition, "run %s has no plan yet: the architect has not written it (see %s)", id, cmd("status", id))
	}
	if asJSON {
		return writeJSON(io.Out, v)
	}
	var b strings.Builder
	writePlanText(&b, snap.State)
	return io.page(b.String())
}
