package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/workspace"
)

// TestParallelFromTheProfileOrTheSpec: a run stores how many lanes run at
// once — the spec's (run --parallel) over the profile's parallel — and a
// number out of range is a usage refusal naming parallel, before anything
// is written.
func TestParallelFromTheProfileOrTheSpec(t *testing.T) {
	base := t.TempDir()
	xdg := filepath.Join(base, "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if err := os.MkdirAll(filepath.Join(xdg, "gaffer"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "gaffer", "config.yaml"), []byte("profiles:\n  default:\n    tdd: false\n    parallel: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, store := filepath.Join(base, "repo"), filepath.Join(base, "store")
	repo, err := workspace.Init(root, "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit(t.Context(), "start", nil, workspace.CommitOptions{AllowEmpty: true,
		Author: workspace.Signature{Name: "test", Email: "test@gaffer.invalid"}}); err != nil {
		t.Fatal(err)
	}
	plan, script := filepath.Join(base, "plan.md"), filepath.Join(base, "script.yaml")
	for p, s := range map[string]string{plan: startPlan, script: startScript} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup := &Setup{}
	h, err := host.Open(t.Context(), host.Config{Repo: root, Store: store, Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, bad := range []int{-1, 65} {
		if _, err := h.Start(t.Context(), host.RunSpec{PlanFile: plan, Script: script, Parallel: bad}); host.CodeOf(err) != host.Usage || !strings.Contains(err.Error(), "parallel") {
			t.Errorf("parallel %d: %v (code %s), want a usage refusal naming parallel", bad, err, host.CodeOf(err))
		}
	}
	if runs, err := h.List(t.Context()); err != nil || len(runs) != 0 {
		t.Fatalf("after the refusals: %d runs, %v; want none", len(runs), err)
	}
	for _, c := range []struct{ spec, want int }{{0, 3}, {1, 1}} {
		spec := host.RunSpec{PlanFile: plan, Script: script, Parallel: c.spec}
		if err := setup.Preflight(root, &spec); err != nil {
			t.Fatalf("preflight: %v", err)
		}
		if _, err := h.Start(t.Context(), spec); err != nil {
			t.Fatalf("start: %v", err)
		}
		rs, err := h.Status(t.Context(), host.RunRequest{RunID: spec.RunID})
		if err != nil {
			t.Fatal(err)
		}
		if got := rs.Snapshot.State.Config.Parallel; got != c.want {
			t.Errorf("spec parallel %d: the run stores %d, want %d", c.spec, got, c.want)
		}
	}
}
