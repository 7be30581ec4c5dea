package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/cli"
	"github.com/gaffer-dev/gaffer/profile"
)

// TestExitCodes builds the binary once and checks that the process exits
// with the documented codes and prints one-line errors, never a trace.
func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gaffer")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=test-1", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bad := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(bad, []byte("### Task 1: a\n- depends on: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"--version"}, 0, "gaffer version test-1\n", ""},
		{[]string{"plan", "validate", "../../examples/demo/plan.md"}, 0, "6 tasks in 4 phases", ""},
		{[]string{"plan", "validate", bad}, 3, "", bad + ":2: task 1 depends on unknown task 2\n"},
		{[]string{"plan", "validate", "nope.md"}, 2, "", "gaffer: open nope.md: no such file or directory\n"},
		{[]string{"plan", "validate"}, 2, "", "gaffer: plan validate: missing FILE\n"},
		{[]string{"--no-such-flag"}, 2, "", "flag provided but not defined"},
	} {
		cmd := exec.Command(bin, c.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) ||
			strings.Contains(stderr.String(), "goroutine") {
			t.Errorf("gaffer %v: exit %d, stdout %q, stderr %q; want exit %d, %q, %q",
				c.args, code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
		}
	}
}

// TestTestHooksComeFromTheirVariablesAlone: each GAFFER_TEST_PAUSE_*
// variable sets its own pause, and an unset, garbled or non-positive one
// sets none.
func TestTestHooksComeFromTheirVariablesAlone(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"GAFFER_TEST_PAUSE_AFTER_COMMIT":  "30s",
		"GAFFER_TEST_PAUSE_AFTER_PUSH":    "1m",
		"GAFFER_TEST_PAUSE_BEFORE_NOTIFY": "soon",
		"GAFFER_TEST_PAUSE_AFTER_RESTORE": "-2s",
	}
	got := testHooks(func(k string) string { return env[k] })
	want := cli.TestHooks{AfterCommit: 30 * time.Second, AfterPush: time.Minute}
	if got != want {
		t.Errorf("hooks %+v, want %+v", got, want)
	}
	if got := testHooks(func(string) string { return "" }); got != (cli.TestHooks{}) {
		t.Errorf("no variables: hooks %+v, want none", got)
	}
	env["GAFFER_TEST_PAUSE_BEFORE_NOTIFY"], env["GAFFER_TEST_PAUSE_AFTER_RESTORE"] = "2s", "3s"
	if got := testHooks(func(k string) string { return env[k] }); got.BeforeNotify != 2*time.Second || got.AfterRestore != 3*time.Second {
		t.Errorf("hooks %+v, want notify 2s and restore 3s", got)
	}
	env["GAFFER_TEST_PAUSE_SESSION"], env["GAFFER_TEST_PAUSE_FOR"] = "doctor/2/1", "4s"
	if got := testHooks(func(k string) string { return env[k] }); got.Session != (profile.SessionPause{Which: "doctor/2/1", For: 4 * time.Second}) {
		t.Errorf("hooks %+v, want the doctor's second phase's first session paused 4s", got)
	}
}
