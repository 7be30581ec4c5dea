package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// TestStartARunFromASpec: a front end that is not the command line (serve,
// the inbox, a program) starts a run with a host.RunSpec, the profile
// package as the host's Setup, and nothing of package cli: the profile
// comes from the user's configuration, the plan and script from the
// spec, and the run completes on its own branch with the script's work.
// A spec the profile refuses is a *host.Error with its code.
func TestStartARunFromASpec(t *testing.T) {
	root, plan, script := startRepo(t)
	store := filepath.Join(t.TempDir(), "store")

	setup := &Setup{}
	h, err := hoststore.Open(t.Context(), hoststore.Config{Repo: root, Store: store, Config: host.Config{Setup: setup}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	// Refused before anything is written: the shape of the spec, then a
	// profile that does not exist.
	if _, err := h.Start(t.Context(), host.RunSpec{Script: script}); host.CodeOf(err) != host.Usage {
		t.Fatalf("a spec without plan or goal: %v (code %s), want a usage refusal", err, host.CodeOf(err))
	}
	if _, err := h.Start(t.Context(), host.RunSpec{PlanFile: plan, Script: script, Profile: "nope"}); host.CodeOf(err) != host.Usage ||
		!strings.Contains(err.Error(), "nope") {
		t.Fatalf("an unknown profile: %v (code %s), want a usage refusal naming it", err, host.CodeOf(err))
	}
	if runs, err := h.List(t.Context(), host.ListRequest{}); err != nil || len(runs) != 0 {
		t.Fatalf("after the refusals: %d runs, %v; want none", len(runs), err)
	}

	run, err := setup.Preflight(root, host.RunSpec{PlanFile: plan, Script: script, AutoApprove: true})
	if err != nil {
		t.Fatalf("preflight: %v", err)
	}
	spec := run.Spec()
	out, err := h.Launch(t.Context(), run)
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	if out.Kind != host.Completed || out.RunID != spec.RunID {
		t.Fatalf("outcome %+v, want run %s completed", out, spec.RunID)
	}
	rs, err := h.Status(t.Context(), host.RunRequest{RunID: spec.RunID})
	if err != nil {
		t.Fatal(err)
	}
	s := rs.Snapshot.State
	if s.Status != state.RunCompleted || s.Run.Goal != "greet" || s.Config.Profile != "default" || s.Config.Agents.Developer.Driver != "script" {
		t.Fatalf("status %s goal %q profile %q developer %+v", s.Status, s.Run.Goal, s.Config.Profile, s.Config.Agents.Developer)
	}
	b, err := workspace.Git(t.Context(), root, "show", host.RunBranch(spec.RunID)+":hello.txt")
	if err != nil || b != "hello" {
		t.Fatalf("hello.txt on the run's branch: %q, %v", b, err)
	}
}

// startRepo makes a repository with one commit (hosttest.New), and a
// user's configuration whose default profile drives every role with the
// script driver; it returns the repository and the plan and script of a
// run beside it.
func startRepo(t *testing.T) (root, plan, script string) {
	t.Helper()
	f := hosttest.New(t)
	xdg := filepath.Join(t.TempDir(), "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if err := os.MkdirAll(filepath.Join(xdg, "gaffer"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "gaffer", "config.yaml"), []byte("profiles:\n  default:\n    driver: script\n    tdd: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f.Repo, f.Plan, f.Script
}
