package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// Issue 23 item 8e: the global flags are accepted after the command as
// well as before it, after RUN too, and mean the same; they stay out of
// the command's help but for the --repo and --store it lists.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	store := filepath.Join(dir, ".git", "gaffer")
	if out, code := gaffer(t, "run", "--repo", dir, "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-after",
		"--log-level", "error", "--log-format", "json"); code != 0 {
		t.Fatalf("run with globals after it: exit %d\n%s", code, out)
	}
	// --log-level after the command turns the run's event log on, as before it.
	out, code := gaffer(t, "run", "--repo", dir, "--plan", plan, "--script", script, "--run-id", "r-after-log", "--log-level", "info")
	if code != ExitAwaitingApproval || !strings.Contains(out, `level=INFO msg="waiting for approval" run=r-after-log`) {
		t.Errorf("run … --log-level info: exit %d, want the approval's INFO line in\n%s", code, out)
	}
	if out, code := gaffer(t, "reject", "r-after-log", "--repo", dir); code != ExitRejected {
		t.Fatalf("reject: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"status", "r-after", "--store", store, "--json"},
		{"status", "r-after", "--repo", dir, "--profile", "none", "--log-format", "json", "--json"},
		{"status", "r-after", "--repo", dir, "--log-level", "debug", "--json"},
		{"status", "--log-format=text", "--repo=" + dir, "r-after", "--json"},
	} {
		out, code := gaffer(t, args...)
		var v runview.Run
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.RunID != "r-after" || v.Status != "completed" {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	for _, args := range [][]string{
		{"list", "--repo", dir},
		{"history", "r-after", "--store", store},
		{"graph", "--repo", dir},
		{"plan", "show", "--repo", dir, "r-after"},
		{"plan", "validate", "--log-level", "warn", plan},
		{"config", "show", "--repo", dir, "--log-format", "json"},
	} {
		if out, code := gaffer(t, args...); code != 0 {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	// A bad value after the command is the usage error it is before it.
	for _, args := range [][]string{
		{"status", "--repo", dir, "--log-level", "loud"},
		{"status", "r-after", "--repo", dir, "--log-level", "loud"},
	} {
		out, code := gaffer(t, args...)
		if code != ExitUsage || !strings.HasPrefix(out, "gaffer: --log-level \"loud\": want debug, info, warn or error\n") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	// The hidden ones stay out of the command's help.
	out, code = gaffer(t, "status", "--help")
	if code != 0 || strings.Contains(out, "--profile") || strings.Contains(out, "--log-level") || !strings.Contains(out, "--repo") {
		t.Errorf("status --help:\n%s", out)
	}

	// serve --repo X, from another directory, through the real binary:
	// it serves X's store.
	bin := gafferBinary(t)
	cmd := exec.Command(bin, "serve", "--repo", dir, "--log-level", "info", "--metrics-addr", "127.0.0.1:0")
	cmd.Dir = t.TempDir() // in no repository: only --repo names one
	cmd.Env = append(os.Environ(), "GAFFER_REPO=", "GAFFER_STORE=")
	log, done := startCaptured(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's output:\n%s", log.String())
		}
	})
	info := waitSocket(t, dir, done)
	if info.Kind != "serve" || info.Store != store {
		t.Errorf("ping = %+v, want serve of %s", info, store)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(log.String(), "level=INFO") {
		t.Errorf("serve: exit %d (want 0 and its info log)\n%s", code, log.String())
	}
}
