package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestListShowsARunsLanes (issue 31 item 9): while a phase's two lanes
// work, `gaffer list` in another process says so in the run's PHASE cell
// ("1/1 (2 lanes)") and list --json carries the phase's lanes; once the
// run has ended the cell is the phase alone.
func TestListShowsARunsLanes(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, p := startTwoLanes(t, bin, "3", "r-list-lanes")
	var row, js string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("list never showed the lanes; last:\n%s\n%s", row, js)
		}
		out, _ := gafferCmd(t, bin, "--repo", dir, "list")
		if lines := strings.Split(out, "\n"); len(lines) > 1 {
			row = lines[1]
		}
		if strings.Contains(row, "r-list-lanes") && strings.Contains(row, " 1/1 (2 lanes) ") {
			js, _ = gafferCmd(t, bin, "--repo", dir, "list", "--json")
			break
		}
	}
	if !strings.Contains(js, `"lanes": 2`) && !strings.Contains(js, `"lanes":2`) {
		t.Errorf("list --json during the lanes has no lanes count:\n%s", js)
	}
	if out, code := p.wait(); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, _ := gafferCmd(t, bin, "--repo", dir, "list")
	if strings.Contains(out, "lanes)") || !strings.Contains(out, "r-list-lanes") {
		t.Errorf("list after the run still shows lanes:\n%s", out)
	}
}

// startTwoLanes makes a demo repository and starts twoLanes' plan there
// (each lane sleeping secs after its write) as runID, auto-approved, with
// extra arguments; it returns the repository and the run's process.
func startTwoLanes(t *testing.T, bin, secs, runID string, extra ...string) (string, *proc) {
	t.Helper()
	dir, _, _ := demoRepo(t)
	plan, script := twoLanes(t, secs)
	args := []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", runID}
	return dir, startProc(t, bin, append(args, extra...), "")
}

// twoLanes writes a plan of one phase of two lanes (tasks 1 and 2, one
// file each) and its script, each lane sleeping secs seconds after its
// write, and returns their paths.
func twoLanes(t *testing.T, secs string) (plan, script string) {
	t.Helper()
	inputs := t.TempDir()
	plan, script = filepath.Join(inputs, "plan.md"), filepath.Join(inputs, "script.yaml")
	writeTestFile(t, plan, "# Plan: greetings\n\n### Task 1: hello\n- type: test\n- depends on: none\n- files: hello.txt\n\n"+
		"### Task 2: bye\n- type: test\n- depends on: none\n- files: bye.txt\n")
	writeTestFile(t, script, `developer:
  - {phase: 1, task: "1", actions: [{write: {path: hello.txt, content: "hello\n"}}, {run: "sleep `+secs+`"}]}
  - {phase: 1, task: "2", actions: [{write: {path: bye.txt, content: "bye\n"}}, {run: "sleep `+secs+`"}]}
`)
	return plan, script
}
