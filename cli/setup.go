package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// setup is what the command line gives a host (host.Setup): runs are made
// from gaffer.yaml's profiles and the run flags, and the agents' drivers
// from a run's stored config.
type setup struct {
	io   IO
	pace *time.Duration // --pace of this command: overrides the run's stored pace
	// opts are the flags of the run being started in this process, with
	// what its checks before the store opened found (the profile, the
	// plan a pipe gave once); nil for runs of other processes (serve).
	opts *RunOptions
	// many is true in serve, whose output the lines of parallel runs share.
	many bool
}

// NewRun checks the spec and the work tree and builds the run's first state.
func (s setup) NewRun(ctx context.Context, repo *workspace.Repo, spec host.RunSpec) (state.ExecutionState, error) {
	o := optionsOf(spec)
	if s.opts != nil && s.opts.RunID == spec.RunID {
		o.profile, o.planSrc = s.opts.profile, s.opts.planSrc
	}
	return newRun(ctx, repo, o, s.io.Keys.getenv)
}

// Drivers makes the drivers of a run's agents (driverFactory).
func (s setup) Drivers(env host.DriverEnv) nodes.DriverFactory {
	opts := agentOptions{groups: env.Groups, keys: s.io.Keys, logs: env.Transcripts, warn: env.Warn, runIDs: s.many}
	return sessionHook(s.io, driverFactory(s.io.Out, s.pace, opts))
}

// CheckKeys refuses a run whose llm drivers miss their key.
func (s setup) CheckKeys(cfg state.RunConfig) error { return checkKeys(cfg, s.io.Keys.getenv) }

// spec is the run o asks for, as the host takes it.
func (o RunOptions) spec() host.RunSpec {
	return host.RunSpec{RunID: o.RunID, PlanFile: o.PlanFile, Goal: o.Goal, Driver: o.Driver, Model: o.Model, Profile: o.Profile,
		Script: o.Script, AutoApprove: o.AutoApprove, AllowDirty: o.AllowDirty, Pace: o.Pace, TrackerID: o.TrackerID, Repo: o.Repo, Plan: o.planSrc, InPlace: o.InPlace}
}

// optionsOf is the run flags of spec.
func optionsOf(s host.RunSpec) RunOptions {
	return RunOptions{RunID: s.RunID, PlanFile: s.PlanFile, Goal: s.Goal, Driver: s.Driver, Model: s.Model, Profile: s.Profile,
		Script: s.Script, AutoApprove: s.AutoApprove, AllowDirty: s.AllowDirty, Pace: s.Pace, TrackerID: s.TrackerID, Repo: s.Repo, planSrc: s.Plan, InPlace: s.InPlace}
}

// newRun checks the preconditions and builds the run's first state.
func newRun(ctx context.Context, repo *workspace.Repo, o RunOptions, getenv func(string) string) (state.ExecutionState, error) {
	var zero state.ExecutionState
	if err := o.checkInputs(); err != nil {
		return zero, err
	}
	rp, err := o.resolved(repo.Root(), getenv)
	if err != nil {
		return zero, err
	}
	inputs, err := checkTree(ctx, repo, o)
	if err != nil {
		return zero, err
	}
	var md string
	if o.PlanFile != "" {
		b, err := o.planSource()
		if err != nil {
			return zero, err
		}
		md = string(b)
	}
	script := o.Script
	if script != "" {
		abs, err := filepath.Abs(script)
		if err != nil {
			return zero, fmt.Errorf("script path: %w", err)
		}
		if err := checkInput(script); err != nil {
			return zero, err
		}
		script = abs
	}
	planPath := ""
	if o.PlanFile != "" {
		planPath, _ = filepath.Abs(o.PlanFile)
	}
	goal := o.Goal
	if goal == "" {
		goal = planTitle(md, o.PlanFile)
	}
	id := o.RunID
	if id == "" {
		id = host.NewRunID(time.Now())
	}
	s, err := state.NewRun(state.RunInfo{ID: id, Goal: goal, TrackerID: o.TrackerID, CreatedAt: time.Now()},
		state.RunConfig{
			Profile: rp.name, Agents: rp.agents, Drivers: rp.drivers, Limits: rp.limits, SkipTDDCheck: rp.skipTDD, Recovery: rp.recovery, Notify: rp.notify,
			ScriptPath: script, PlanPath: planPath, Inputs: inputs, AutoApprove: o.AutoApprove, AllowDirty: o.AllowDirty, Pace: o.Pace,
		})
	if err != nil {
		return zero, exitf(ExitUsage, "%w", err)
	}
	s.Plan.Markdown = md
	return s, nil
}

// driverFactory makes the agents' drivers from a run's stored config: one
// place for every driver kind: the script driver here, llm and cli in
// drivers.go. A non-nil pace replaces the run's stored pace for this
// process (resume --pace), without changing what is stored.
//
// Before it makes any driver of a run, the variables the run's profile
// names as keys leave this process's environment (KeyVault), and every
// driver's processes start from an environment without them (a CLI agent
// gets those its pass_env lists).
func driverFactory(out io.Writer, pace *time.Duration, opts agentOptions) nodes.DriverFactory {
	var mu sync.Mutex
	scripts := map[string]*script.Script{}
	real := newRealDrivers(out, opts)
	plain := plainDriverFactory(out, pace, opts, real, &mu, scripts)
	var seq sync.Mutex
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		d, err := plain(role, cfg)
		if err != nil || d == nil || opts.logs == "" {
			return d, err
		}
		return &transcribed{inner: d, dir: opts.logs, mu: &seq,
			redact: secretRedactor(keyNames(cfg), real.getenv, os.Environ())}, nil
	}
}

// plainDriverFactory makes the drivers, without transcripts.
func plainDriverFactory(out io.Writer, pace *time.Duration, opts agentOptions, real *realDrivers, mu *sync.Mutex,
	scripts map[string]*script.Script) nodes.DriverFactory {
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		if err := opts.keys.take(keyNames(cfg)); err != nil {
			return nil, err
		}
		kind := cfg.Agents.Role(string(role)).Driver
		switch kind {
		case "", "script":
			if cfg.ScriptPath == "" {
				return nil, fmt.Errorf("%w: the script driver needs --script", ErrUnsupportedDriver)
			}
			mu.Lock()
			sc, ok := scripts[cfg.ScriptPath]
			if !ok {
				var err error
				if sc, err = script.Load(cfg.ScriptPath); err != nil {
					mu.Unlock()
					return nil, err
				}
				scripts[cfg.ScriptPath] = sc
			}
			mu.Unlock()
			if (role == agent.RoleEvaluator || role == agent.RoleSummarizer || role == agent.RoleDoctor || role == agent.RoleReplanner) && !sc.Has(role) {
				return nil, nil
			}
			p := cfg.Pace
			if pace != nil {
				p = *pace
			}
			var stdout io.Writer
			if out != nil {
				stdout = redactingWriter{w: out, redact: secretRedactor(keyNames(cfg), real.getenv, os.Environ())}
			}
			return script.NewDriver(sc, script.Options{Pace: p, Stdout: stdout, RunIDs: opts.runIDs,
				Env: agentEnviron(cfg, nil, real.getenv), Groups: opts.groups, Warn: opts.warn}), nil
		}
		return real.driver(role, cfg, kind)
	}
}

// sessionHook is the recovery kill test's hook: with
// GAFFER_TEST_PAUSE_SESSION set to ROLE/PHASE/ATTEMPT ("none" for no
// pause), every session is announced on the output ("gaffer-test:
// session doctor/2/2"), and the one named is followed by a pause of
// GAFFER_TEST_PAUSE_FOR (default 30s) before it runs. Unset, f is
// returned unchanged.
func sessionHook(cio IO, f nodes.DriverFactory) nodes.DriverFactory {
	which := os.Getenv("GAFFER_TEST_PAUSE_SESSION")
	if which == "" {
		return f
	}
	d, err := time.ParseDuration(os.Getenv("GAFFER_TEST_PAUSE_FOR"))
	if err != nil || d <= 0 {
		d = 30 * time.Second
	}
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		drv, err := f(role, cfg)
		if err != nil || drv == nil {
			return drv, err
		}
		return announced{inner: drv, out: cio.Out, which: which, pause: d}, nil
	}
}

// announced is the driver sessionHook wraps.
type announced struct {
	inner agent.Driver
	out   io.Writer
	which string
	pause time.Duration
}

func (a announced) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	name := fmt.Sprintf("%s/%d/%d", s.Role, s.Phase, s.Attempt)
	fmt.Fprintf(a.out, "gaffer-test: session %s\n", name)
	if name == a.which {
		time.Sleep(a.pause)
	}
	return a.inner.Run(ctx, s)
}

// planTitle is a goal for a plan given without one: its first heading, or
// the file's name.
func planTitle(md, file string) string {
	for _, l := range strings.Split(md, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok {
			t = strings.TrimSpace(strings.TrimPrefix(t, "Plan:"))
			if t != "" {
				return t
			}
		}
	}
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}
