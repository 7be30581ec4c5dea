package profile

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

// Setup is what every front end gives a host (host.Setup): runs are
// prepared from gaffer.yaml's profiles and the spec (Preflight, Prepare),
// and the agents' drivers made from a run's stored config. Its zero value
// is ready; it is safe for concurrent use.
type Setup struct {
	// Out receives the script driver's output and the test hooks'
	// announcements; nil: nowhere.
	Out io.Writer
	// Keys holds the keys taken out of the environment; nil leaves the
	// environment alone.
	Keys *KeyVault
	// Getenv is the environment a run's configuration, keys and notify
	// variables are read from, after the keys Keys has taken: gaffer's
	// command line gives its own (cli.IO.Getenv), a test a map. Nil: the
	// process's environment.
	Getenv func(string) string
	// Pace, when set, overrides the runs' stored pace in this process
	// (resume --pace) without changing what is stored.
	Pace *time.Duration
	// RunIDs, set, makes every agent line name its run: several runs
	// share the output (serve's log).
	RunIDs bool
	// PauseSession is the recovery kill tests' hook (SessionPause); only
	// tests set it. Zero: none.
	PauseSession SessionPause
}

// SessionPause is the recovery kill tests' hook: with Which set to
// ROLE/PHASE/ATTEMPT ("none" for no pause), every agent session is
// announced on Setup.Out ("gaffer-test: session doctor/2/2"), and the one
// named is followed by a pause of For (30s when zero) before it runs.
// Only tests set it: gaffer's main reads it from GAFFER_TEST_PAUSE_SESSION
// and GAFFER_TEST_PAUSE_FOR, the one place that reads them.
type SessionPause struct {
	Which string
	For   time.Duration
}

var _ host.Setup = (*Setup)(nil)

// Preflight checks everything a run of spec can be checked for before
// anything is written, for the repository in repoDir: the spec's shape
// and input files, the script, the profile, the CLI agents' programs and
// API keys, and the plan. It returns every problem found (a *host.Error),
// or the run prepared: its run id minted when spec has none, its profile
// resolved, its plan read (a pipe reads once). The command line checks
// the work tree next (Run.Precheck), then opens the store and launches
// the run (host.Host.Launch).
func (s *Setup) Preflight(repoDir string, spec host.RunSpec) (*Run, error) {
	o := request{RunSpec: withRunID(spec)}
	if err := o.preflight(repoDir, s.getenv); err != nil {
		return nil, err
	}
	return &Run{o: o, getenv: s.getenv}, nil
}

// Prepare prepares a run of spec for repo (host.Setup): the spec's shape
// and input files, the profile with its keys and programs, the plan read
// and a run id minted when spec has none. The work tree is checked when
// the host begins the run (Run.Begin), under its lock. It is how a run
// queued in serve, or started by any program through Host.Start, is
// prepared.
func (s *Setup) Prepare(_ context.Context, repo *workspace.Repo, spec host.RunSpec) (host.Prepared, error) {
	o := request{RunSpec: withRunID(spec)}
	if err := o.checkInputs(); err != nil {
		return nil, err
	}
	rp, err := resolved(repo.Root(), o.RunSpec, s.getenv)
	if err != nil {
		return nil, err
	}
	o.profile = &rp
	if o.PlanFile != "" {
		if _, err := o.planSource(); err != nil {
			return nil, err
		}
	}
	return &Run{o: o, getenv: s.getenv}, nil
}

// getenv reads name from the keys taken (Keys), then from Getenv.
func (s *Setup) getenv(name string) string {
	if v, ok := s.Keys.Lookup(name); ok {
		return v
	}
	if s.Getenv != nil {
		return s.Getenv(name)
	}
	return os.Getenv(name)
}

// withRunID is spec with a run id: the one place a run's id is minted.
func withRunID(spec host.RunSpec) host.RunSpec {
	if spec.RunID == "" {
		spec.RunID = host.NewRunID(time.Now())
	}
	return spec
}

// CheckInputs checks spec's shape and input files only: exactly one of a
// plan and a goal, a goal within its limit, the files readable (submit,
// before anything is queued).
func CheckInputs(spec host.RunSpec) error {
	o := request{RunSpec: spec}
	return o.checkInputs()
}

// CheckSubmit checks spec before it is queued in a serve that runs
// elsewhere, from the repository in repoDir: its shape and input files
// (CheckInputs; nothing is queued for a bad call), then it names its
// files by absolute paths, gives it a run id when it has none and its
// repository's key (serve refuses a run of another repository), and
// checks the notify variables of its profile in this environment
// (getenv).
func CheckSubmit(repoDir string, spec *host.RunSpec, getenv func(string) string) error {
	if err := CheckInputs(*spec); err != nil {
		return err
	}
	for _, p := range []*string{&spec.PlanFile, &spec.Script} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return fmt.Errorf("submit: %w", err)
			}
			*p = abs
		}
	}
	*spec = withRunID(*spec)
	repo, err := workspace.Open(repoDir)
	if err != nil {
		return errorf(host.Refused, "open repository %s: %w", repoDir, err)
	}
	if spec.Repo, err = host.RepoKey(repo.Root()); err != nil {
		return err
	}
	return CheckSubmitNotify(repo.Root(), *spec, getenv)
}

// Drivers makes the drivers of a run's agents (driverFactory).
func (s *Setup) Drivers(env host.DriverEnv) nodes.DriverFactory {
	opts := agentOptions{groups: env.Groups, keys: s.Keys, getenv: s.getenv, logs: env.Transcripts, warn: env.Warn, runIDs: s.RunIDs}
	return sessionHook(s.Out, s.PauseSession, driverFactory(s.Out, s.Pace, opts))
}

// CheckKeys refuses a run whose llm drivers miss their key.
func (s *Setup) CheckKeys(cfg state.RunConfig) error { return checkKeys(cfg, s.getenv) }

// request is a spec being checked, with what the checks found.
type request struct {
	host.RunSpec
	profile *runProfile // resolved by the checks; nil until then
}

// planSource reads the plan file once; later calls return what it read.
func (o *request) planSource() ([]byte, error) {
	if o.Plan != nil {
		return o.Plan, nil
	}
	b, err := ReadInput(o.PlanFile)
	if err != nil {
		return nil, err
	}
	o.Plan = b
	return b, nil
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

// sessionHook wraps f's drivers in the kill tests' announcements and
// pause (SessionPause). With no pause asked for, f is returned unchanged.
func sessionHook(out io.Writer, p SessionPause, f nodes.DriverFactory) nodes.DriverFactory {
	which, d := p.Which, p.For
	if which == "" {
		return f
	}
	if d <= 0 {
		d = 30 * time.Second
	}
	if out == nil {
		out = io.Discard // a Setup without Out
	}
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		drv, err := f(role, cfg)
		if err != nil || drv == nil {
			return drv, err
		}
		a := announced{inner: drv, out: out, which: which, pause: d}
		if r, ok := drv.(interface{ Redact(string) string }); ok {
			return redactingAnnounced{announced: a, redact: r.Redact}, nil
		}
		return a, nil
	}
}

// redactingAnnounced is an announced driver whose inner one redacts as
// transcripts do: it keeps saying so (the workflow's content redaction).
type redactingAnnounced struct {
	announced
	redact func(string) string
}

// Redact is the inner driver's.
func (a redactingAnnounced) Redact(text string) string { return a.redact(text) }

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

// PlanTitle is a goal for a plan given without one: its first heading, or
// the file's name.
func PlanTitle(md, file string) string {
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
