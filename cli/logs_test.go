package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/profile"
)

// TestLogsPrintsTheAgentsSessions: every session of a run is kept and
// `gaffer logs RUN --phase N` prints phase N's, in order; secrets are
// redacted and long texts cut.
func TestLogsPrintsTheAgentsSessions(t *testing.T) {
	const secret = "s3cr3t-value-of-the-token"
	t.Setenv("MY_SERVICE_TOKEN", secret)
	dir, _, _ := demoRepo(t)
	inputs := t.TempDir()
	plan, script := filepath.Join(inputs, "plan.md"), filepath.Join(inputs, "script.yaml")
	writeTestFile(t, plan, halfPlan)
	long := strings.Repeat("x", profile.MaxTranscriptText+100)
	writeTestFile(t, script, `developer:
  - phase: 1
    actions:
      - write: {path: a.txt, content: "a\n"}
    summary: "wrote a.txt with `+secret+`"
  - phase: 2
    actions:
      - write: {path: b.txt, content: "b\n"}
    summary: `+long+`
`)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-logs"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "logs", "r-logs", "--phase", "1")
	want := `── developer, phase 1, attempt 1, iteration 1 ──
  → write: a.txt
  ← write: wrote 2 bytes to a.txt
  wrote a.txt with [redacted MY_SERVICE_TOKEN]
  = report: completed: wrote a.txt with [redacted MY_SERVICE_TOKEN]
── reviewer, phase 1, attempt 1, iteration 1 ──
`
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("logs --phase 1: exit %d\n%s\nwant it to begin with:\n%s", code, out, want)
	}
	all, code := gaffer(t, "--repo", dir, "logs")
	if code != 0 || strings.Count(all, "── ") != 4 || !strings.Contains(all, "x… [100 bytes cut]") || strings.Contains(all, secret) {
		t.Fatalf("logs: exit %d\n%s", code, all)
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".git", "gaffer.logs", "r-logs", "*.jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		fi, _ := os.Stat(f)
		if strings.Contains(string(b), secret) || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, holds the secret: %v", f, fi.Mode().Perm(), strings.Contains(string(b), secret))
		}
	}
	if out, code := gaffer(t, "--repo", dir, "logs", "r-nope"); code != ExitPrecondition {
		t.Fatalf("logs of an unknown run: exit %d\n%s", code, out)
	}
}

// TestLogsFollowFromAnotherTerminal: `gaffer logs RUN --follow`, started
// in another process before the run's first session, prints the sessions
// as the run goes and exits 0 by itself when the run ends.
func TestLogsFollowFromAnotherTerminal(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	follow := startProc(t, bin, []string{"--repo", dir, "logs", "r-follow", "--follow"}, "")
	run := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve",
		"--run-id", "r-follow", "--pace", "20ms"}, "")
	if out, code := run.wait(); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code, ended := follow.waitWithin(30 * time.Second)
	if !ended {
		t.Fatal("logs --follow did not stop when the run ended")
	}
	// 9 developer sessions: phase 1's two lanes, phase 2's two lanes and
	// task 2b's again (the review rejected it alone), phase 3 once, phase
	// 4 three times (two failures, the replan, the pass).
	if code != 0 || strings.Count(out, "── developer, phase ") != 9 || !strings.Contains(out, "── developer, phase 2, task 2b, attempt 2, iteration 2 ──") ||
		strings.Contains(out, "── developer, phase 2, task 2a, attempt 2") || !strings.Contains(out, "── replanner, phase 4, attempt 2, iteration 1 ──") ||
		!strings.Contains(out, "── reviewer, phase 4, attempt 3, iteration 1 ──") {
		t.Fatalf("logs --follow: exit %d\n%s", code, out)
	}
	if last := strings.TrimSpace(out[strings.LastIndex(out, "──"):]); !strings.Contains(last, "= report: completed") {
		t.Fatalf("logs --follow ends with:\n%s", last)
	}
}

// TestLogsTaskShowsItsLanesSession: in a phase of two lanes, `gaffer
// logs RUN --task ID` prints that task's lane's session alone, titled
// with its task; a task with no lane session (of a phase of one) is
// exit 8 naming --phase, and a malformed id exit 2.
func TestLogsTaskShowsItsLanesSession(t *testing.T) {
	t.Parallel()
	dir, _, _ := demoRepo(t)
	inputs := t.TempDir()
	plan, script := filepath.Join(inputs, "plan.md"), filepath.Join(inputs, "script.yaml")
	writeTestFile(t, plan, `# Plan: greetings

### Task 1: hello
- type: test
- depends on: none
- files: hello.txt

### Task 2: bye
- type: test
- depends on: none
- files: bye.txt

### Task 3: all
- type: impl
- depends on: 1, 2
- files: all.txt
`)
	writeTestFile(t, script, `developer:
  - phase: 1
    task: "1"
    summary: said hello
    actions:
      - write: {path: hello.txt, content: "hello\n"}
  - phase: 1
    task: "2"
    summary: said bye
    actions:
      - write: {path: bye.txt, content: "bye\n"}
  - phase: 2
    actions:
      - write: {path: all.txt, content: "all\n"}
`)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--parallel", "2", "--run-id", "r-lanelogs"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "logs", "r-lanelogs", "--task", "2")
	if code != 0 || strings.Count(out, "── ") != 1 || !strings.HasPrefix(out, "── developer, phase 1, task 2, attempt 1, iteration 1 ──\n") ||
		!strings.Contains(out, "said bye") || strings.Contains(out, "said hello") {
		t.Fatalf("logs --task 2: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "logs", "r-lanelogs", "--task", "1", "--phase", "1"); code != 0 || !strings.Contains(out, "said hello") || strings.Contains(out, "said bye") {
		t.Fatalf("logs --task 1 --phase 1: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "logs", "r-lanelogs", "--task", "3"); code != ExitPrecondition || !strings.Contains(out, "--phase N") {
		t.Fatalf("logs --task 3 (a phase of one): exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "logs", "r-lanelogs", "--task", "x/../1"); code != ExitUsage {
		t.Fatalf("logs --task x/../1: exit %d\n%s", code, out)
	}
	all, code := gaffer(t, "--repo", dir, "logs", "r-lanelogs", "--phase", "1")
	if code != 0 || !strings.Contains(all, "── developer, phase 1, task 1, attempt 1") || !strings.Contains(all, "── developer, phase 1, task 2, attempt 1") {
		t.Fatalf("logs --phase 1: exit %d\n%s", code, all)
	}
}
