package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hoststore"
)

// TestParallelFromTheProfileOrTheSpec: a run stores how many lanes run at
// once — the spec's (run --parallel) over the profile's parallel — and a
// number out of range is a usage refusal naming parallel, before anything
// is written.
func TestParallelFromTheProfileOrTheSpec(t *testing.T) {
	root, plan, script := startRepo(t)
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if err := os.WriteFile(filepath.Join(xdg, "gaffer", "config.yaml"), []byte("profiles:\n  default:\n    driver: script\n    tdd: false\n    parallel: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "store")
	setup := &Setup{}
	h, err := hoststore.Open(t.Context(), hoststore.Config{Repo: root, Store: store, Config: host.Config{Setup: setup}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, bad := range []int{-1, 65} {
		if _, err := h.Start(t.Context(), host.RunSpec{PlanFile: plan, Script: script, Parallel: bad}); host.CodeOf(err) != host.Usage || !strings.Contains(err.Error(), "parallel") {
			t.Errorf("parallel %d: %v (code %s), want a usage refusal naming parallel", bad, err, host.CodeOf(err))
		}
	}
	if runs, err := h.List(t.Context(), host.ListRequest{}); err != nil || len(runs) != 0 {
		t.Fatalf("after the refusals: %d runs, %v; want none", len(runs), err)
	}
	for _, c := range []struct{ spec, want int }{{0, 3}, {1, 1}} {
		run, err := setup.Preflight(root, host.RunSpec{PlanFile: plan, Script: script, Parallel: c.spec})
		if err != nil {
			t.Fatalf("preflight: %v", err)
		}
		spec := run.Spec()
		if _, err := h.Launch(t.Context(), run); err != nil {
			t.Fatalf("launch: %v", err)
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
