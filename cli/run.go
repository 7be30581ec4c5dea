package cli

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/daemon"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/profile"
)

// runSpec is the run the flags of c ask for (run, run --detach, submit):
// flags a command does not have are left zero.
func runSpec(c *ucli.Context) (host.RunSpec, error) {
	g, _, err := globalsOf(c)
	if err != nil {
		return host.RunSpec{}, err
	}
	return host.RunSpec{
		PlanFile: c.String("plan"), Goal: c.String("goal"), Driver: c.String("driver"), Model: c.String("model"),
		Script: c.String("script"), AutoApprove: c.Bool("auto-approve"), AllowDirty: c.Bool("allow-dirty"),
		InPlace: c.Bool("in-place"), Pace: c.Duration("pace"), TrackerID: c.String("tracker-id"), RunID: c.String("run-id"),
		Profile: g.Profile, Parallel: c.Int("parallel"),
	}, nil
}

func runCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "run",
		Usage:        "start a run: plan (or take --plan), ask for approval, run the phases",
		OnUsageError: onUsageError,
		Flags: localGlobals(
			&ucli.StringFlag{Name: "plan", Usage: "a plan file (skips the architect)"},
			&ucli.StringFlag{Name: "goal", Usage: "what to build (the architect writes the plan)"},
			&ucli.StringFlag{Name: "driver", EnvVars: []string{"GAFFER_DRIVER"}, Usage: "every agent's driver: script, llm or cli (default: the profile's, script unless gaffer.yaml names another)"},
			&ucli.StringFlag{Name: "model", EnvVars: []string{"GAFFER_MODEL"}, Usage: "every agent's model (default: the profile's)"},
			&ucli.StringFlag{Name: "script", EnvVars: []string{"GAFFER_SCRIPT"}, Usage: "the script driver's file (its format: gaffer help script-format)"},
			&ucli.BoolFlag{Name: "auto-approve", EnvVars: []string{"GAFFER_AUTO_APPROVE"}, Usage: "run the plan without asking"},
			&ucli.BoolFlag{Name: "allow-dirty", EnvVars: []string{"GAFFER_ALLOW_DIRTY"}, Usage: "start on a work tree with uncommitted changes (with --in-place)"},
			&ucli.BoolFlag{Name: "in-place", EnvVars: []string{"GAFFER_IN_PLACE"}, Usage: "work in this checkout instead of the run's own work tree and branch (gaffer/<run-id>)"},
			&ucli.GenericFlag{Name: "pace", EnvVars: []string{"GAFFER_PACE"}, Value: &lenientDuration{}, Usage: "pause before each agent action, to follow a run (a duration: 500ms, 2s)"},
			&ucli.StringFlag{Name: "tracker-id", EnvVars: []string{"GAFFER_TRACKER_ID"}, Usage: "an issue key for the execution directory's name"},
			&ucli.IntFlag{Name: "parallel", EnvVars: []string{"GAFFER_PARALLEL"}, Usage: "how many lanes of a phase run at once (1: one after another, each a fresh session; default: the profile's parallel, else 4)"},
			&ucli.StringFlag{Name: "run-id", Hidden: true, Usage: "use this run id (tests)"},
		),
		Action: func(c *ucli.Context) error { return Run(c, io) },
	}
}

// Run starts the run c's flags ask for in this process and drives it to
// its end or its first pause, with --metrics-addr serving its metrics
// meanwhile: flags, the run prepared before the store exists (a bad call
// or a refused work tree writes nothing), Launch, the outcome. A store
// held by `gaffer serve` is refused with the command that queues the run
// there.
func Run(c *ucli.Context, io IO) (err error) {
	spec, err := runSpec(c)
	if err != nil {
		return err
	}
	setup := newSetup(c, io)
	run, err := prepareRun(c, setup, spec)
	if err != nil {
		return err
	}
	defer run.Release() // the checkout's lock, when no host took it
	l, err := openRunHost(c, io, setup)
	if err != nil {
		return err
	}
	defer closeHost(l, &err)
	out, err := l.Launch(c.Context, run)
	return report(io, l.cmd, out, err)
}

// prepareRun prepares the run of spec before the store exists
// (profile.Setup.Preflight, then the work tree's check, Run.Precheck): a
// bad call or a refused work tree writes nothing.
func prepareRun(c *ucli.Context, setup *profile.Setup, spec host.RunSpec) (*profile.Run, error) {
	g, _, err := globalsOf(c)
	if err != nil {
		return nil, err
	}
	run, err := setup.Preflight(g.Repo, spec)
	if err := profile.JoinProblems(flagProblem(c), err); err != nil {
		return nil, err
	}
	if err := run.Precheck(c.Context, g.Repo); err != nil {
		return nil, err
	}
	return run, nil
}

// lenientDuration is the value of run's --pace: it takes any text, so
// that a bad one is listed with the run's other problems (flagProblem)
// instead of hiding them. String is the text as given, which urfave/cli's
// Duration parses (a bad one reads as 0).
type lenientDuration struct {
	raw string
	err error
}

// Set records s and whether it is a duration; it never fails.
func (v *lenientDuration) Set(s string) error {
	v.raw = s
	_, v.err = time.ParseDuration(s)
	return nil
}

func (v *lenientDuration) String() string {
	if v == nil {
		return ""
	}
	return v.raw
}

// flagProblem is the usage error of a --pace that is no duration; nil
// when it is one, or not given.
func flagProblem(c *ucli.Context) error {
	if v, ok := c.Generic("pace").(*lenientDuration); ok && v.err != nil {
		return &host.Error{Code: host.Usage, Err: fmt.Errorf("--pace %q: want a duration such as 500ms or 2s", v.raw)}
	}
	return nil
}

// openRunHost opens the store for a run here, serving --metrics-addr
// while it is open; a store another process holds is refused with the
// command that fits (heldRefusal).
func openRunHost(c *ucli.Context, io IO, setup *profile.Setup) (*local, error) {
	var m *metrics.Metrics
	var reg *prometheus.Registry
	addr := flagString(c, metricsAddrFlag)
	if addr != "" {
		var err error
		if reg, m, err = daemon.NewMetrics(); err != nil {
			return nil, err
		}
	}
	l, err := openHost(c, io, hostOptions{kind: commandKind(c), metrics: m, setup: setup})
	if err != nil {
		return nil, heldRefusal(c, err)
	}
	if m != nil {
		if err := serveMetrics(c.Context, l, addr, reg, m); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// heldRefusal is err, or for a store another process holds the command
// that fits: queue the run in the serve that holds it, or start one.
func heldRefusal(c *ucli.Context, err error) error {
	if ExitCode(err) != ExitLocked {
		return err
	}
	cl, cerr := holderOf(c)
	if cerr != nil || cl == nil {
		return err
	}
	info, perr := cl.Ping(c.Context)
	switch {
	case perr != nil:
		return err
	case info.Kind == "serve":
		return exitf(ExitLocked, "gaffer serve (pid %d) holds the store %s; queue the run there with "+
			"`gaffer run --detach` or `gaffer submit` (same flags)", info.PID, info.Store)
	}
	_, g, _ := storeOf(c)
	// One process drives a store's runs: several at once are serve's to
	// run, each in its own work tree.
	return exitf(ExitLocked, "gaffer %s (pid %d) holds the store %s; wait for it to finish, or run several at once: "+
		"start `%s` and queue each run with `gaffer submit` (same flags)", info.Kind, info.PID, info.Store, commandFormatter(g.Repo)("serve"))
}
