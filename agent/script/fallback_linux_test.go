package script

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// This package's tests do not call agent.SandboxMain: its run actions
// are confined without the sandbox helper, as in a program that embeds
// gaffer's packages without it. These tests hold the fallbacks.

// runAction runs command as phase 1's only action in a fresh repository
// and returns the report, with the command's output as its Output, and
// the repository.
func runAction(t *testing.T, command string, env []string) (agent.Report, string) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	d := NewDriver(&Script{Developer: []DeveloperStep{{Match: Match{Phase: 1}, Actions: []Action{{Run: command}}}}},
		Options{Env: env, Stdout: &out})
	rep, _, err := runSession(t, d, dev(1, 1, 1, dir))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rep.Output = out.String()
	return rep, dir
}

// TestRunActionEndsSetsidEscapesWithoutHelper: without a PID namespace,
// what a command left running outside its process group (setsid, a
// double fork, a writer in the repository) is found by its user
// namespace and killed before the command counts as ended.
func TestRunActionEndsSetsidEscapesWithoutHelper(t *testing.T) {
	rep, dir := runAction(t, `setsid sh -c 'while :; do echo x >> escaped; sleep 0.01; done' </dev/null >/dev/null 2>&1 &
(setsid sleep 301 </dev/null >/dev/null 2>&1 &)
setsid sleep 302 &
sleep 0.2; echo done`, nil)
	if rep.Status != agent.StatusCompleted {
		t.Fatalf("report %+v", rep)
	}
	if left := testkit.NoneIn(dir); len(left) > 0 {
		t.Fatalf("processes %v outlived the command", left)
	}
}

// TestRunActionCannotChangeGoCachesWithoutHelper: without the helper's
// layers, a command gets Go caches of its own, and the user's module
// cache, which it can still read, stays as it was.
func TestRunActionCannotChangeGoCachesWithoutHelper(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	mod := t.TempDir()
	file := filepath.Join(mod, "example.com", "m@v1.0.0", "m.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ := runAction(t, `echo 'package m // evil' > `+file+`; echo own: "$GOMODCACHE" "$GOPROXY"`,
		append(os.Environ(), "GOMODCACHE="+mod))
	if got := testkit.ReadFile(t, file); got != "package m\n" {
		t.Errorf("the user's module cache was written: %q\n%+v", got, rep)
	}
	proxy := "file://" + filepath.Join(mod, "cache", "download")
	if rep.Status != agent.StatusCompleted || strings.Contains(rep.Output, "own: "+mod+" ") || !strings.Contains(rep.Output, proxy) {
		t.Errorf("want a module cache of the command's own, the user's as its proxy:\n%+v", rep)
	}
}

// TestRunActionCannotSignalOthersWithoutHelper: without a PID namespace,
// a command confined by Landlock (ABI 6, Linux 6.12, or later) still
// cannot stop or kill a process outside its session, another program of
// the user's, nor signal gaffer (SIGCONT: a signal that would not stop
// the test were it let through).
func TestRunActionCannotSignalOthersWithoutHelper(t *testing.T) {
	if r, why := landlock.Available(); r == nil || r.ABI() < 6 {
		t.Skipf("no Landlock signal scoping here (%s)", why)
	}
	v := exec.Command("sleep", "300")
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Process.Kill(); _ = v.Wait() })
	p := strconv.Itoa(v.Process.Pid)
	// The command's text is in the output too: what it prints is made
	// by the shell ("signalled-2"), which the text does not hold.
	rep, _ := runAction(t, "kill -STOP "+p+" && echo signalled-$((1+1)); kill -9 "+p+" && echo signalled-$((1+1)); "+
		"kill -CONT "+strconv.Itoa(os.Getpid())+" && echo signalled-$((1+1)); echo end-$((1+1))", nil)
	if strings.Contains(rep.Output, "signalled-2") || !strings.Contains(rep.Output, "end-2") {
		t.Errorf("the command signalled a process outside its session:\n%s", rep.Output)
	}
	if err := v.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other program is gone: %v", err)
	}
}
