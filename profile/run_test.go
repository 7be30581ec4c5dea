package profile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/workspace"
)

// TestPreparedRunIsResolvedOnce: Preflight mints the run id once and
// resolves the profile once; the run begins from what it resolved (a
// configuration changed since is not read again), and from the work
// tree's check Precheck made: the user's uncommitted edits it found are
// the ones the run starts without.
func TestPreparedRunIsResolvedOnce(t *testing.T) {
	root, plan, script := startRepo(t)
	if err := os.WriteFile(filepath.Join(root, "README"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setup := &Setup{}
	run, err := setup.Preflight(root, host.RunSpec{PlanFile: plan, Script: script})
	if err != nil {
		t.Fatal(err)
	}
	id := run.Spec().RunID
	if err := host.CheckRunID(id); err != nil {
		t.Fatalf("the prepared run's id: %v", err)
	}
	if err := run.Precheck(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	// A profile that no longer resolves: the run does not read it again.
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if err := os.WriteFile(filepath.Join(xdg, "gaffer", "config.yaml"), []byte("profiles:\n  default:\n    driver: nonsense\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	repo, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s, left, err := run.Begin(t.Context(), repo)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if s.Run.ID != id || s.Config.Profile != "default" || s.Config.Agents.Developer.Driver != "script" || s.Plan.Markdown != hosttest.Plan {
		t.Fatalf("the first state: run %s, profile %q, developer %+v; want run %s of the resolved profile", s.Run.ID, s.Config.Profile, s.Config.Agents.Developer, id)
	}
	if !slices.Equal(left, []string{"README"}) {
		t.Fatalf("the user's uncommitted edits: %v, want README", left)
	}
	if _, err := setup.Prepare(t.Context(), repo, run.Spec()); host.CodeOf(err) != host.Invalid {
		t.Fatalf("a run prepared again resolves again: %v (%s), want the changed profile refused", err, host.CodeOf(err))
	}
}

// TestPrecheckKeepsTheCheckoutForTheHost: a run in place checks the
// checkout under its lock and keeps the lock until the host takes it
// (or Release gives it up), so that no other process works there in
// between; a dirty checkout is refused and its lock given up at once.
func TestPrecheckKeepsTheCheckoutForTheHost(t *testing.T) {
	root, plan, script := startRepo(t)
	repo, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	setup := &Setup{}
	run, err := setup.Preflight(root, host.RunSpec{PlanFile: plan, Script: script, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Precheck(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.LockWorkTree("r-other"); !errors.Is(err, workspace.ErrWorkTreeHeld) {
		t.Fatalf("the checkout while the run is prepared: %v, want held", err)
	}
	run.Release()
	l, err := repo.LockWorkTree("r-other")
	if err != nil {
		t.Fatalf("the checkout once released: %v", err)
	}
	l.Unlock()

	if err := os.WriteFile(filepath.Join(root, "README"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err = setup.Preflight(root, host.RunSpec{PlanFile: plan, Script: script, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Precheck(t.Context(), root); !errors.Is(err, host.ErrDirtyTree) {
		t.Fatalf("a dirty checkout: %v, want ErrDirtyTree", err)
	}
	if run.TakeLock() != nil {
		t.Fatal("a refused run kept the checkout's lock")
	}
	l, err = repo.LockWorkTree("r-other")
	if err != nil {
		t.Fatalf("the checkout after the refusal: %v", err)
	}
	l.Unlock()
}
