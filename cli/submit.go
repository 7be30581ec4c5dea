package cli

import (
	"errors"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/profile"
)

func submitCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:  "submit",
		Usage: "queue a run in the `gaffer serve` that holds the store (the same flags as run)",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "plan", Usage: "a plan file (skips the architect)"},
			&ucli.StringFlag{Name: "goal", Usage: "what to build (the architect writes the plan)"},
			&ucli.StringFlag{Name: "driver", EnvVars: []string{"GAFFER_DRIVER"}, Usage: "every agent's driver: script, llm or cli (default: the profile's)"},
			&ucli.StringFlag{Name: "script", EnvVars: []string{"GAFFER_SCRIPT"}, Usage: "the script driver's file"},
			&ucli.BoolFlag{Name: "auto-approve", EnvVars: []string{"GAFFER_AUTO_APPROVE"}, Usage: "run the plan without asking"},
			&ucli.BoolFlag{Name: "allow-dirty", EnvVars: []string{"GAFFER_ALLOW_DIRTY"}, Usage: "start on a work tree with uncommitted changes (with --in-place)"},
			&ucli.BoolFlag{Name: "in-place", EnvVars: []string{"GAFFER_IN_PLACE"}, Usage: "work in this checkout instead of the run's own work tree and branch (gaffer/<run-id>)"},
			&ucli.DurationFlag{Name: "pace", EnvVars: []string{"GAFFER_PACE"}, Usage: "pause before each agent action"},
			&ucli.StringFlag{Name: "tracker-id", EnvVars: []string{"GAFFER_TRACKER_ID"}, Usage: "an issue key for the execution directory's name"},
			&ucli.StringFlag{Name: "run-id", Hidden: true, Usage: "use this run id (tests)"},
		},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("submit takes no arguments")
			}
			return Submit(c, io)
		},
	}
}

// Submit sends the run c's flags ask for to the serve process that holds
// the store: flags, the checks that need nothing open (profile.CheckSubmit),
// Submit, the outcome.
func Submit(c *ucli.Context, io IO) error {
	spec, err := runSpec(c)
	if err != nil {
		return err
	}
	if err := flagProblem(c); err != nil { // run --detach's --pace
		return err
	}
	g, _, err := globalsOf(c)
	if err != nil {
		return err
	}
	if err := profile.CheckSubmit(g.Repo, &spec); err != nil {
		return err
	}
	dir, _, err := storeOf(c)
	if err != nil {
		return err
	}
	cl := socket.NewClient(dir)
	out, err := cl.Submit(c.Context, spec)
	if errors.Is(err, control.ErrNoServer) {
		// On a database store, the serves of any host take it (hosts.go).
		svc, closeSvc, derr := viaDatabase(c, io)
		if derr != nil {
			return derr
		}
		if svc != nil {
			defer closeSvc()
			out, err = svc.Submit(c.Context, spec)
		}
	}
	if errors.Is(err, control.ErrNoServer) {
		return exitf(ExitPrecondition, "no gaffer serve holds the store (%s); start one with: gaffer serve", cl.Path())
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(io.Out, out.Message)
	fmt.Fprintf(io.Out, "  watch:  gaffer status %s --watch\n", out.RunID)
	return nil
}
