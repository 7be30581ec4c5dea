// Package hosttest holds what the tests of package host and of the
// packages around it (its socket, serve's pool, its store) start from: a
// repository with one commit, the plan and script of a two-phase run
// beside it, a host.Setup that drives runs with the script driver, and a
// Host on a Badger store in the test's temporary directory. It is for
// tests only.
package hosttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Plan is the fixture's plan: two phases, each writing one file.
const Plan = `# Plan: greet

### Task 1: Write hello
- type: impl
- depends on: none
- files: hello.txt

Write hello.txt.

### Task 2: Write bye
- type: impl
- depends on: 1
- files: bye.txt

Write bye.txt.
`

// Script is the developer's script of Plan.
const Script = `developer:
  - phase: 1
    summary: wrote hello.txt
    actions:
      - write:
          path: hello.txt
          content: "hello\n"
  - phase: 2
    summary: wrote bye.txt
    actions:
      - write:
          path: bye.txt
          content: "bye\n"
`

// Setup makes runs from a plan file and drives them with the script
// driver: the program around a host, as small as it gets.
type Setup struct{}

// Prepare prepares a run of spec as it is: its plan is read as it begins.
func (Setup) Prepare(_ context.Context, _ *workspace.Repo, spec host.RunSpec) (host.Prepared, error) {
	return Prepared{RunSpec: spec}, nil
}

// Prepared is a run of a plan file (Setup.Prepare); a test makes one of
// its own spec to launch it (host.Host.Launch).
type Prepared struct{ host.RunSpec }

// Spec is the run's spec.
func (p Prepared) Spec() host.RunSpec { return p.RunSpec }

// TakeLock holds no lock.
func (Prepared) TakeLock() *workspace.WorkTreeLock { return nil }

// Begin reads the run's plan and makes its first state.
func (p Prepared) Begin(context.Context, *workspace.Repo) (state.ExecutionState, []string, error) {
	md, err := os.ReadFile(p.PlanFile)
	if err != nil {
		return state.ExecutionState{}, nil, &host.Error{Code: host.Usage, Err: fmt.Errorf("plan: %w", err)}
	}
	s, err := state.NewRun(state.RunInfo{ID: p.RunID, Goal: "greet", CreatedAt: time.Now()},
		state.RunConfig{ScriptPath: p.Script, PlanPath: p.PlanFile, SkipTDDCheck: true, AutoApprove: p.AutoApprove})
	if err != nil {
		return s, nil, err
	}
	s.Plan.Markdown = string(md)
	return s, nil, nil
}

// Drivers makes script drivers from the run's script.
func (Setup) Drivers(env host.DriverEnv) nodes.DriverFactory {
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		sc, err := script.Load(cfg.ScriptPath)
		if err != nil {
			return nil, err
		}
		switch role {
		case agent.RoleEvaluator, agent.RoleSummarizer, agent.RoleDoctor, agent.RoleReplanner:
			if !sc.Has(role) {
				return nil, nil
			}
		}
		return script.NewDriver(sc, script.Options{Groups: env.Groups}), nil
	}
}

// CheckKeys needs no key.
func (Setup) CheckKeys(state.RunConfig) error { return nil }

// Fixture is a repository with one commit, and the plan and script of a
// two-phase run beside it; Store is where its store goes.
type Fixture struct {
	Repo, Store, Plan, Script string
}

// New makes a Fixture in t's temporary directory.
func New(t testing.TB) Fixture {
	t.Helper()
	base := t.TempDir()
	f := Fixture{Repo: filepath.Join(base, "repo"), Store: filepath.Join(base, "store"),
		Plan: filepath.Join(base, "plan.md"), Script: filepath.Join(base, "script.yaml")}
	repo, err := workspace.Init(f.Repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.Repo, "README"), []byte("greetings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit(t.Context(), "start", nil, workspace.CommitOptions{
		Author: workspace.Signature{Name: "test", Email: "test@gaffer.invalid"}}); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{f.Plan: Plan, f.Script: Script} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Open opens f's store with the Host of cfg on it (NewHost), closed when
// the test ends.
func (f Fixture) Open(t testing.TB, cfg host.Config) *host.Host {
	t.Helper()
	h, err := f.NewHost(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// NewHost opens f's repository and store (a Badger directory) and the
// Host of cfg on them, with Setup unless cfg names one.
func (f Fixture) NewHost(cfg host.Config) (*host.Host, error) {
	repo, err := workspace.Open(f.Repo)
	if err != nil {
		return nil, err
	}
	store, err := badger.Open(f.Store, badger.Options{SyncWrites: true})
	if err != nil {
		return nil, err
	}
	cfg.Dir = f.Store
	if cfg.Setup == nil {
		cfg.Setup = Setup{}
	}
	return host.New(cfg, repo, store, store.Close)
}

// Spec is a run of f's plan and script with id.
func (f Fixture) Spec(id string) host.RunSpec {
	return host.RunSpec{RunID: id, PlanFile: f.Plan, Script: f.Script}
}

// Started opens f's store with a run of f's plan for each id, driven to
// its end, or left waiting for its plan's approval when the id ends in
// "waits".
func (f Fixture) Started(t testing.TB, ids ...string) *host.Host {
	t.Helper()
	h := f.Open(t, host.Config{})
	for _, id := range ids {
		spec := f.Spec(id)
		spec.AutoApprove = !strings.HasSuffix(id, "waits")
		if _, err := h.Start(t.Context(), spec); err != nil {
			t.Fatal(err)
		}
	}
	return h
}
