package nodes

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// plantingAgent plants, during phase 1's developer session, an fsmonitor
// in .git/config and a pre-commit hook, as an unconfined agent could.
type plantingAgent struct {
	inner agent.Driver
	dir   string
	once  sync.Once
}

func (d *plantingAgent) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	rep, err := d.inner.Run(ctx, s)
	if s.Role == agent.RoleDeveloper && s.Phase == 1 {
		d.once.Do(func() {
			cfg := filepath.Join(d.dir, ".git", "config")
			old, _ := os.ReadFile(cfg)
			_ = os.WriteFile(cfg, append(old, "[core]\n\tfsmonitor = /tmp/x.sh\n"...), 0o644)
			_ = os.MkdirAll(filepath.Join(d.dir, ".git", "hooks"), 0o755)
			_ = os.WriteFile(filepath.Join(d.dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch /tmp/x\n"), 0o755)
		})
	}
	return rep, err
}

// TestGitSettingsChangedInSessionAreRefused: a developer session that
// changes .git/config and adds a hook stops the run before its review and
// commit, naming both files and how to put each back; resuming is refused
// until they are, and then the run completes.
func TestGitSettingsChangedInSessionAreRefused(t *testing.T) {
	h := newHarness(t, retryScript)
	h.rec.inner = &plantingAgent{inner: h.rec.inner, dir: h.dir}
	_, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	var ge *GitSettingsError
	if !errors.Is(err, ErrGitSettings) || !errors.As(err, &ge) {
		t.Fatalf("run: %v, want ErrGitSettings", err)
	}
	if want := []string{"config", "hooks/pre-commit"}; !slices.Equal(ge.Paths, want) || ge.Phase != 1 {
		t.Fatalf("error names phase %d, %q; want phase 1, %q", ge.Phase, ge.Paths, want)
	}
	msg := err.Error()
	for _, want := range []string{"git settings changed", "git cat-file -p ", "rm " + filepath.Join(h.dir, ".git", "hooks", "pre-commit")} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message lacks %q:\n%s", want, msg)
		}
	}
	if got := h.subjects(); !slices.Equal(got, []string{"initial"}) {
		t.Fatalf("commits after the refusal: %q", got)
	}
	if _, err := h.runner.Resume(context.Background(), "r-1"); !errors.Is(err, ErrGitSettings) {
		t.Fatalf("resume with the settings still changed: %v", err)
	}
	for _, p := range ge.Paths {
		cmd := exec.Command("sh", "-c", ge.Fixes[p])
		cmd.Dir = h.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", ge.Fixes[p], err, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, ".git", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Fatalf("the fix left the fsmonitor in .git/config:\n%s", b)
	}
	res, err := h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
}
