package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oneCommandRepo makes a repository with one small file, and a plan and
// a script, out of it, whose one session runs a command that writes
// ran.txt.
func oneCommandRepo(t *testing.T) (repo, plan, script string) {
	t.Helper()
	repo = t.TempDir()
	gitRepo(t, repo, map[string]string{"README.md": "small\n"})
	plan, script = planFiles(t, "# Plan: one\n\n### Task 1: Run a command\n\nRun it.\n",
		"developer:\n  - phase: 1\n    actions:\n      - run: \"echo ran > ran.txt\"\n    summary: ran\nreviewer: []\n")
	return repo, plan, script
}

// TestUnwritableGroupsDirStopsForResume makes .git/gaffer.groups a
// read-only mount, so gaffer cannot record the process group of the
// agent's command before letting it start. That is the machine failing
// gaffer, not the agent failing its task: the run used to mark the
// session failed, send it back for review five times and halt (exit 5).
// It must stop for resume with no attempt or review counted (exit 1,
// naming the error), and complete with `gaffer resume` once the directory
// is writable.
func TestUnwritableGroupsDirStopsForResume(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	repo, plan, script := oneCommandRepo(t)
	groups := filepath.Join(repo, ".git", "gaffer.groups")
	if err := os.MkdirAll(groups, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", groups, groups).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	mounted := true
	unmount := func() {
		if !mounted {
			return
		}
		mounted = false
		if out, err := exec.Command("umount", groups).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", groups, err, out)
		}
	}
	t.Cleanup(unmount)
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", groups).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	g := []string{"--repo", repo}
	out, code := gafferCmd(t, bin, append(g, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-grpsro")...)
	t.Logf("run with a read-only groups directory: exit %d\n%s", code, out)
	if code != ExitFailure || !strings.Contains(out, "read-only file system") || !strings.Contains(out, "no attempt counted") {
		t.Fatalf("run: exit %d, want %d saying the machine stopped it (read-only file system, no attempt counted)\n%s", code, ExitFailure, out)
	}
	v := procStatusJSON(t, bin, g...)
	if v.Status != "running" || !v.Stopped || len(v.Phases) != 1 || v.Phases[0].Attempt != 1 || v.Phases[0].Review != nil {
		t.Fatalf("after the stop: status %q stopped %v phases %+v, want running, stopped, phase 1 at attempt 1 without a review", v.Status, v.Stopped, v.Phases)
	}
	unmount()
	if out, code := gafferCmd(t, bin, append(g, "resume")...); code != 0 {
		t.Fatalf("resume once the directory is writable: exit %d\n%s", code, out)
	}
	if v := procStatusJSON(t, bin, g...); v.Status != "completed" {
		t.Fatalf("after resume: status %q", v.Status)
	}
}
