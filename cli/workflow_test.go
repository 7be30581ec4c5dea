package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/runview"
)

// inProcess serializes the CLI apps that parallel tests run in this
// process (gaffer, gafferTTY, run): urfave/cli's HelpFlag is one package
// variable whose Apply writes to itself, so two apps parsing their flags
// at once are a data race (the race detector caught two parallel tests).
// A gaffer process runs one app; only tests run several.
var inProcess sync.Mutex

// gaffer runs the CLI in-process with no terminal and returns its output
// (stdout and stderr) and exit code.
func gaffer(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return gafferEnv(t, nil, args...)
}

// gafferEnv is gaffer with env set in the environment the commands read
// (IO.Getenv, envWith): a test that needs variables of its own gives them
// here, not with t.Setenv, and runs beside the others.
func gafferEnv(t *testing.T, env map[string]string, args ...string) (string, int) {
	t.Helper()
	var buf bytes.Buffer
	app := NewWithIO("test", IO{In: strings.NewReader(""), Out: &buf, Err: &buf, Terminal: func() bool { return false }, Getenv: envWith(env)})
	inProcess.Lock()
	defer inProcess.Unlock()
	err := app.RunContext(context.Background(), append([]string{"gaffer"}, args...))
	Report(&buf, err)
	return buf.String(), ExitCode(err)
}

// envWith is an environment that holds env, over the process's own.
func envWith(env map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := env[name]; ok {
			return v
		}
		return os.Getenv(name)
	}
}

// demoRepo makes the demo repository and returns it with the paths of its
// plan and script.
func demoRepo(t *testing.T) (dir, plan, script string) {
	t.Helper()
	dir, err := SetupDemo(context.Background(), filepath.Join(t.TempDir(), "calc"))
	if err != nil {
		t.Fatal(err)
	}
	sd := filepath.Join(dir, ".git", "gaffer-demo")
	return dir, filepath.Join(sd, "plan.md"), filepath.Join(sd, "script.yaml")
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestRunRefusesADirtyTree(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte("package calc // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--in-place") // in its own work tree the run minds no dirt
	if code != ExitPrecondition {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitPrecondition, out)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(out, "--allow-dirty") || !strings.Contains(out, "uncommitted") {
		t.Fatalf("want one line naming the cause and the fix, got:\n%s", out)
	}
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--allow-dirty", "--in-place", "--auto-approve"); code != 0 {
		t.Fatalf("--allow-dirty: exit %d\n%s", code, out)
	}
}

// statusJSON runs `gaffer GLOBALS... status [RUN] --json`: args are global
// flags with their values, then optionally RUN.
func statusJSON(t *testing.T, args ...string) runview.Run {
	t.Helper()
	globals, run := args, []string(nil)
	if len(args)%2 == 1 {
		globals, run = args[:len(args)-1], args[len(args)-1:]
	}
	cmd := append(append(append([]string{}, globals...), "status"), append(run, "--json")...)
	out, code := gaffer(t, cmd...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	var v runview.Run
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return v
}

// TestApprovalWithoutTerminalThenStatusListApprove: off a terminal, run
// stops at the approval (exit 4) and says how to approve or reject;
// status and list show the waiting run, resume keeps it waiting, and
// approve, the built binary's (off a terminal too: its four phases in
// process, under the race detector and one at a time with the other
// tests' commands, were most of the test's time), completes it.
func TestApprovalWithoutTerminalThenStatusListApprove(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-test-1")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
	}
	for _, want := range []string{"approve r-test-1", `reject r-test-1 --feedback`} {
		if !strings.Contains(out, want) {
			t.Fatalf("run's output lacks %q:\n%s", want, out)
		}
	}
	v := statusJSON(t, "--repo", dir)
	if v.RunID != "r-test-1" || v.Status != "awaiting_approval" || len(v.Phases) != 4 || v.Phases[0].Status != "pending" {
		t.Fatalf("status before approval: %+v", v)
	}
	out, code = gaffer(t, "--repo", dir, "list", "--json")
	var list []runview.Run
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Status != "awaiting_approval" {
		t.Fatalf("list --json: exit %d\n%s", code, out)
	}
	if out, code = gaffer(t, "--repo", dir, "resume"); code != ExitAwaitingApproval {
		t.Fatalf("resume of a waiting run: exit %d\n%s", code, out)
	}
	if out, code = gafferCmd(t, bin, "--repo", dir, "approve"); code != 0 {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	v = statusJSON(t, "--repo", dir, "--store", filepath.Join(dir, ".git", "gaffer"))
	if v.Status != "completed" || len(v.Phases) != 4 {
		t.Fatalf("status after approval: %+v", v)
	}
	for _, p := range v.Phases {
		if p.Status != "completed" || len(p.PostCommit) != 40 {
			t.Fatalf("phase %+v", p)
		}
	}
	if v.Phases[1].Attempt != 2 || v.Phases[1].Review == nil || !v.Phases[1].Review.Approved {
		t.Fatalf("phase 2 should have needed a second attempt: %+v", v.Phases[1])
	}
	out, code = gaffer(t, "--repo", dir, "history", "r-test-1")
	if code != 0 || !strings.Contains(out, "approval") || !strings.Contains(out, "review") {
		t.Fatalf("history: exit %d\n%s", code, out)
	}
	if out, code = gaffer(t, "--repo", dir, "resume", "r-test-1"); code != ExitPrecondition {
		t.Fatalf("resume of a finished run: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("tree not clean:\n%s", got)
	}
}

func TestRejectEndsTheRunWithExit6(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d", code)
	}
	if out, code := gaffer(t, "--repo", dir, "approve", "r-nope"); code != ExitPrecondition {
		t.Fatalf("approve of an unknown run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "reject")
	if code != ExitRejected {
		t.Fatalf("reject: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "rejected" {
		t.Fatalf("status %q", v.Status)
	}
}

func TestCancelAndFork(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-c"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d", code)
	}
	out, code := gaffer(t, "--repo", dir, "fork", "r-c", "--from", "1")
	if code != 0 || !strings.Contains(out, "Forked r-c at checkpoint 1") {
		t.Fatalf("fork: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "cancel", "r-c"); code != 0 {
		t.Fatalf("cancel: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir, "r-c"); v.Status != "cancelled" {
		t.Fatalf("status %q", v.Status)
	}
	// A second cancel (or a retry whose first answer was lost) finds what
	// it asked for: no refusal.
	if out, code := gaffer(t, "--repo", dir, "cancel", "r-c"); code != 0 || !strings.Contains(out, "Run r-c was cancelled already.") {
		t.Fatalf("second cancel: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "approve", "r-c"); code == 0 {
		t.Fatalf("approve of a cancelled run succeeded:\n%s", out)
	}
}

func TestDemoRunsToTheEnd(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	out, code := gaffer(t, "demo", "--dir", dir, "--no-go-test")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, out)
	}
	for _, want := range []string{"approving…", "review of phase 2 (iteration 1): rejected", "$ git log --oneline",
		"phase 4: Implement Eval", "Execution directory: ",
		// The recovery it shows: the same go test failure twice, the replan, then success.
		"recovery, phase 4: replan — 2 consecutive build_error failures (similarity 1.00)",
		"recovery, phase 4: replan:accepted — Parse returns four values",
		"Recovery: phase 4 failed twice the same way (build_error: ./eval.go:8:14: assignment mismatch: 3 variables but Parse returns 4 values);\n" +
			"  replanned: the revised approach kept the phase's frozen goal and was accepted, and attempt 3 passed.\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	v := statusJSON(t, "--repo", dir)
	if v.Status != "completed" || len(v.Phases) != 4 || v.Phases[1].Attempt != 2 || v.Phases[3].Attempt != 3 ||
		v.Recovery == nil || v.Recovery.Replans != 1 || v.Recovery.DoctorCalls != 0 || v.Recovery.Last == nil ||
		v.Recovery.Last.Decision != "replan:accepted" || v.Recovery.Last.Phase != 4 {
		t.Fatalf("status %s, phases %+v, recovery %+v", v.Status, v.Phases, v.Recovery)
	}
	// The default flow: the run's work is on its branch, main is as it was,
	// and the demo ends with the command that merges it.
	branch := "gaffer/" + v.RunID
	if recs := gitOut(t, dir, "ls-tree", "--name-only", branch+":"+v.ExecDir+"/recovery"); strings.Count(recs, "decision-") != 2 {
		t.Fatalf("decision records %q, want the replan and its acceptance", recs)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "main"); n != "1" {
		t.Fatalf("main has %s commits after the demo, want its first one only", n)
	}
	if want := "Take its work into main with:\n\n  gaffer --repo " + dir + " merge " + v.RunID + "\n"; !strings.HasSuffix(out, want) {
		t.Fatalf("the demo does not end with the merge command %q:\n%s", want, out)
	}
	if !strings.Contains(demo.Plan, "### Task 4") {
		t.Fatal("embedded plan")
	}
	subjects := gitOut(t, dir, "log", "--format=%s", branch)
	if n := strings.Count(subjects, "\nphase "); n != 4 {
		t.Fatalf("%d phase commits:\n%s", n, subjects)
	}
}

func TestAStoreInUseIsExit7NamingThePid(t *testing.T) {
	t.Parallel()
	dir, _, _ := demoRepo(t)
	st, err := badger.Open(filepath.Join(dir, ".git", "gaffer"), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, code := gaffer(t, "--repo", dir, "status")
	if code != ExitLocked || !strings.Contains(out, fmt.Sprintf("pid %d", os.Getpid())) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestTerminalAsksFeedbackThenApproves(t *testing.T) {
	t.Parallel()
	dir, _, script := demoRepo(t)
	var buf bytes.Buffer
	app := NewWithIO("test", IO{In: strings.NewReader("f\nsplit phase 2\na\n"), Out: &buf, Err: &buf, Terminal: func() bool { return true }})
	inProcess.Lock() // see inProcess
	err := app.RunContext(context.Background(), []string{"gaffer", "--repo", dir, "run", "--goal", "calc", "--script", script, "--run-id", "r-tty"})
	inProcess.Unlock()
	if code := ExitCode(err); code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, buf.String())
	}
	out := buf.String()
	if n := strings.Count(out, "Approve this plan?"); n != 2 {
		t.Fatalf("asked %d times, want 2 (feedback, then approve):\n%s", n, out)
	}
	if !strings.Contains(out, "revision 1") || !strings.Contains(out, "Phase 4 (impl): ✓ Completed") {
		t.Fatalf("no replan or no finished tree:\n%s", out)
	}
	v := statusJSON(t, "--repo", dir)
	if v.Status != "completed" || v.PlanRevision != 1 {
		t.Fatalf("status %+v", v)
	}
}

func TestForkedRunGetsItsOwnID(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-orig", "--in-place"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d", code)
	}
	out, code := gaffer(t, "--repo", dir, "fork", "r-orig", "--from", "3")
	if code != 0 {
		t.Fatalf("fork: exit %d\n%s", code, out)
	}
	var list []runview.Run
	out, _ = gaffer(t, "--repo", dir, "list", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Fatalf("list: %v\n%s", err, out)
	}
	fork := list[0].RunID
	if fork == "r-orig" {
		fork = list[1].RunID
	}
	if out, code := gaffer(t, "--repo", dir, "resume", fork); code != ExitAwaitingApproval {
		t.Fatalf("resume %s: exit %d\n%s", fork, code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "approve", fork); code != 0 {
		t.Fatalf("approve %s: exit %d\n%s", fork, code, out)
	}
	if got := gitOut(t, dir, "log", "-1", "--skip=1", "--format=%(trailers:key=Gaffer-Run,valueonly)"); got != fork {
		t.Fatalf("the fork's commits carry run %q, want %q", got, fork)
	}
	if v := statusJSON(t, "--repo", dir, "r-orig"); v.Status != "awaiting_approval" {
		t.Fatalf("the original run changed: %s", v.Status)
	}
}

func TestRepoAndStoreFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	store := filepath.Join(t.TempDir(), "store")
	if out, code := gaffer(t, "run", "--repo", dir, "--store", store, "--plan", plan, "--script", script, "--run-id", "r-late"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--store", store, "--repo", dir, "r-late"); v.Status != "awaiting_approval" {
		t.Fatalf("status: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !os.IsNotExist(err) {
		t.Fatalf("the default store was created although --store was given: %v", err)
	}
	if out, code := gaffer(t, "reject", "r-late", "--repo", dir, "--store", store); code != ExitRejected {
		t.Fatalf("reject: exit %d\n%s", code, out)
	}
}
