package cliagent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// TestCLISessionSeesOnlyItsOwnAndEndsAll is issue 30's items 3 and 4
// for a CLI session: it reads every /proc/*/cmdline (another program's
// token is there), signals gaffer, the program and its own parent, and
// leaves setsid processes behind, one writing into the repository, one
// holding its output. It reads no token, gaffer and the program run on,
// the session ends as the agent's own exit says, and nothing of it
// survives.
func TestCLISessionSeesOnlyItsOwnAndEndsAll(t *testing.T) {
	other := exec.Command("sh", "-c", "sleep 300", "gaffer-victim", "--token=ghp-cmdline-canary-78")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	script := fmt.Sprintf(`cat /proc/[0-9]*/cmdline | tr '\0' ' '; echo
for p in %d %d $PPID; do kill -STOP $p 2>/dev/null; kill -9 $p 2>/dev/null; done
setsid sh -c 'while :; do echo x >> escaped; sleep 0.01; done' </dev/null >/dev/null 2>&1 &
(setsid sleep 301 </dev/null >/dev/null 2>&1 &)
setsid sleep 302 &
sleep 0.2; echo end-$((1+1))`, os.Getpid(), other.Process.Pid)
	dir := t.TempDir()
	d := newCLI(t, Options{Template: Template{Command: []string{"sh", "-c", script}}})
	if ok, why := d.helper.PID(); !ok {
		t.Skip(why)
	}
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "p"})
	if err != nil || rep.Status != agent.StatusCompleted || !strings.Contains(rep.Output, "end-2") {
		t.Fatalf("run: %v %+v", err, rep)
	}
	if strings.Contains(rep.Output, "ghp-cmdline-canary-78") {
		t.Errorf("the session read another process's command line:\n%s", rep.Output)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other program is gone: %v", err)
	}
	if left := testkit.NoneIn(dir); len(left) > 0 {
		t.Errorf("processes %v outlived the session", left)
	}
}
