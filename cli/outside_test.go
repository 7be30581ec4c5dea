package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const oneTaskScript = `developer:
  - phase: 1
    actions:
      - write: {path: a.txt, content: "the agent's\n"}
    summary: wrote a
`

// TestRunStopsOnEditsOutsideTheSession: the user edits the agent's file
// while the reviewer works (the real binary, paced); the run stops with
// exit 8 before committing, naming the file and the command that puts the
// agent's version back; after it, resume commits the agent's work.
func TestRunStopsOnEditsOutsideTheSession(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, _ := demoRepo(t)
	plan, script := planFiles(t, "# Plan: one note\n\n### Task 1: Write a\nWrite a.txt.\n", oneTaskScript)
	p := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve",
		"--run-id", "r-20260101-edits0", "--pace", "1500ms", "--in-place"}, "") // the edit is made in the checkout
	waitOutput(t, p, "» review")
	writeTestFile(t, filepath.Join(dir, "a.txt"), "the agent's, and mine\n") // during the reviewer's pause
	out, code := p.wait()
	m := regexp.MustCompile(`changed outside the agent's session after it ended: a\.txt; .*\((git cat-file -p [0-9a-f]{12} > a\.txt)\)`).FindStringSubmatch(out)
	if code != ExitPrecondition || m == nil || !strings.Contains(out, "nothing committed") {
		t.Fatalf("run: exit %d, want %d naming a.txt and the fix\n%s", code, ExitPrecondition, out)
	}
	// Issue 23 item 8b: the refusal's paragraph is printed once.
	if n := strings.Count(out, "changed outside the agent's session"); n != 1 {
		t.Errorf("the refusal is printed %d times, want once:\n%s", n, out)
	}
	if got := gitOut(t, dir, "log", "--format=%s"); strings.Contains(got, "phase 1") {
		t.Fatalf("phase 1 was committed:\n%s", got)
	}
	fix := exec.Command("sh", "-c", m[1])
	fix.Dir = dir
	if b, err := fix.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, b)
	}
	if out, code := startProc(t, bin, []string{"--repo", dir, "resume"}, "").wait(); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "show", "HEAD~1:a.txt"); got != "the agent's" {
		t.Fatalf("phase 1 committed a.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
}
