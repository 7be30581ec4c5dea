package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInPlaceAgentCannotPlantGitCommands (issue 20): an in-place run's
// developer runs a command that sets core.fsmonitor in .git/config and
// writes a post-checkout hook, each pointing at a program that leaves a
// marker. Both writes fail and the run completes; the next run, in its
// own work tree (git worktree add, which runs both when planted), runs
// neither, and nor does gaffer's git anywhere in either run.
func TestInPlaceAgentCannotPlantGitCommands(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, _ := demoRepo(t)
	aux := t.TempDir()
	marker := filepath.Join(aux, "ran")
	evil := filepath.Join(aux, "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(aux, "plan.md")
	if err := os.WriteFile(plan, []byte("# Plant\n\n### Task 1: Add a note\n\nWrite note.txt.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(aux, "script.yaml")
	body := `developer:
  - phase: 1
    summary: Wrote the note.
    actions:
      - run: 'git config core.fsmonitor ` + evil + ` && echo PLANTED-CONFIG; mkdir -p .git/hooks; cp ` + evil + ` .git/hooks/post-checkout && echo PLANTED-HOOK; true'
      - write: {path: note.txt, content: "a note\n"}
reviewer:
  - phase: 1
    approved: true
    comments: fine
`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := readText(t, filepath.Join(dir, ".git", "config"))
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--in-place", "--run-id", "r-plant-1")
	if code != 0 {
		t.Fatalf("in-place run: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "could not lock config file .git/config: Read-only file system") {
		t.Errorf("the agent's git config did not fail on a read-only .git:\n%s", out)
	}
	if got := readText(t, filepath.Join(dir, ".git", "config")); got != cfg {
		t.Errorf(".git/config changed in the in-place run:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "post-checkout")); err == nil {
		t.Errorf("the hook was planted")
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-plant-2")
	if code != 0 {
		t.Fatalf("run in its own work tree: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a planted program ran:\n%s", b)
	}
}
