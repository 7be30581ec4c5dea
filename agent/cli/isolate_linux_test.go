package cliagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// TestCLICannotReadGafferEnviron runs a CLI agent session whose process
// tries to read /proc/PID/environ of gaffer (this test process) and of
// gaffer's parent: both are refused, with confinement on; with it off, the
// same session reads gaffer's (so the test can fail).
func TestCLICannotReadGafferEnviron(t *testing.T) {
	probe := fmt.Sprintf(`for p in %d %d; do if head -c 1 /proc/$p/environ >/dev/null 2>&1; then echo $p:read; else echo $p:refused; fi; done`,
		os.Getpid(), os.Getppid())
	for _, c := range []struct {
		confine agent.Confinement
		want    string
	}{
		{agent.ConfineAuto, fmt.Sprintf("%d:refused\n%d:refused", os.Getpid(), os.Getppid())},
		{agent.ConfineOff, fmt.Sprintf("%d:read", os.Getpid())},
	} {
		d := newCLI(t, Options{Template: Template{Command: []string{"sh", "-c", probe}}, Confine: c.confine,
			Warn: func(m string) { t.Skip(m) }})
		rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir(), Prompt: "p"})
		if err != nil || rep.Status != agent.StatusCompleted {
			t.Fatalf("confine %v: run: %v %+v", c.confine, err, rep)
		}
		if !strings.Contains(rep.Output, c.want) {
			t.Errorf("confine %v: want %q in the session's output:\n%s", c.confine, c.want, rep.Output)
		}
	}
}

// TestCLIInPlaceCannotWriteGit runs a CLI session in the repository
// itself (an in-place run) that tries to plant an fsmonitor and a hook:
// both writes fail and .git is as it was; the work tree is writable.
func TestCLIInPlaceCannotWriteGit(t *testing.T) {
	dir := testkit.GitRepo(t)
	cfg := testkit.ReadFile(t, filepath.Join(dir, ".git", "config"))
	script := `git config core.fsmonitor /tmp/x.sh && echo planted-config
mkdir -p .git/hooks; printf '#!/bin/sh\ntouch /tmp/x\n' > .git/hooks/pre-commit && echo planted-hook
echo mine > mine.txt && echo wrote-tree`
	d := newCLI(t, Options{Template: Template{Command: []string{"sh", "-c", script}}, Warn: func(m string) { t.Skip(m) }})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "p"})
	if err != nil {
		t.Fatalf("run: %v %+v", err, rep)
	}
	if strings.Contains(rep.Output, "planted") || !strings.Contains(rep.Output, "wrote-tree") {
		t.Errorf("want .git refused and the tree written:\n%s", rep.Output)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, ".git", "config")); got != cfg {
		t.Errorf(".git/config changed:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("the hook was planted")
	}
}
