package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func submitCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:  "submit",
		Usage: "queue a run in the `gaffer serve` that holds the store (the same flags as run)",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "plan", Usage: "a plan file (skips the architect)"},
			&ucli.StringFlag{Name: "goal", Usage: "what to build (the architect writes the plan)"},
			&ucli.StringFlag{Name: "driver", EnvVars: []string{"GAFFER_DRIVER"}, Usage: "every agent's driver: script, llm or cli (default: the profile's, script unless gaffer.yaml names another)"},
			&ucli.StringFlag{Name: "script", EnvVars: []string{"GAFFER_SCRIPT"}, Usage: "the script driver's file (its format: gaffer help script-format)"},
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
	if err := profile.CheckSubmit(g.Repo, &spec, io.getenv); err != nil {
		return err
	}
	dir, _, err := storeOf(c)
	if err != nil {
		return err
	}
	endSpan := profile.SubmitSpan(c.Context, g.Repo, &spec, io.getenv)
	out, err := submitTo(c, io, dir, spec)
	endSpan(err)
	if err != nil {
		return err
	}
	cmd := commandFormatter(g.Repo)
	fmt.Fprintln(io.Out, out.Message)
	trees := host.WorkTreesDir(dir) // where the serve holding the store makes the run's
	if out.Database {
		trees = "" // on the host whose serve takes it
	}
	for _, l := range submittedStartLines(c.Context, g.Repo, trees, spec, out.RunID, cmd) {
		fmt.Fprintln(io.Out, l)
	}
	fmt.Fprintf(io.Out, "  watch:  %s\n", cmd("status", out.RunID, "--watch"))
	return nil
}

// submitted is the outcome of submitTo: Database when the database's
// serves took the run (on any host).
type submitted struct {
	host.Outcome
	Database bool
}

// submitTo queues spec in the serve holding the store at dir, or in the
// database's serves on a database store.
func submitTo(c *ucli.Context, io IO, dir string, spec host.RunSpec) (submitted, error) {
	cl := socket.NewClient(dir)
	out, err := cl.Submit(c.Context, spec)
	if errors.Is(err, control.ErrNoServer) {
		// On a database store, the serves of any host take it (hosts.go).
		svc, closeSvc, derr := viaDatabase(c, io)
		if derr != nil {
			return submitted{}, derr
		}
		if svc != nil {
			defer closeSvc()
			out, err = svc.Submit(c.Context, spec)
			if err == nil {
				return submitted{Outcome: out, Database: true}, nil
			}
		}
	}
	if errors.Is(err, control.ErrNoServer) {
		return submitted{}, exitf(ExitPrecondition, "no gaffer serve holds the store (%s); start one with: gaffer serve", cl.Path())
	}
	return submitted{Outcome: out}, err
}

// submittedStartLines are the lines a run started in this process says
// first, for a run queued in serve: where its work goes (its branch and
// work tree under trees, "" when another host's serve makes it), and the
// uncommitted changes it starts without. The submitter says them: serve's
// output is not the user's terminal.
func submittedStartLines(ctx context.Context, repoDir, trees string, spec host.RunSpec, id string, cmd func(...string) string) []string {
	repo, err := workspace.Open(repoDir)
	if err != nil {
		return nil
	}
	branch, _ := repo.Branch(ctx)
	s := state.ExecutionState{Run: state.RunInfo{ID: id}}
	if spec.InPlace {
		return []string{host.WhereLine(s, branch, cmd)}
	}
	s.Run.WorkTree = "on the host whose serve takes it"
	if trees != "" {
		abs, err := filepath.Abs(trees)
		if err != nil {
			abs = trees
		}
		s.Run.WorkTree = filepath.Join(abs, id)
	}
	lines := []string{host.WhereLine(s, branch, cmd)}
	if st, err := repo.Status(ctx); err == nil {
		if left := host.Uncommitted(st); len(left) > 0 {
			lines = append(lines, host.LeftOutLine(left))
		}
	}
	return lines
}
