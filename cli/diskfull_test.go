package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// tmpfs mounts a tmpfs of size (mount's syntax: "1m") on a new directory
// and unmounts it when the test ends; it skips the test, saying why, when
// it cannot mount (not root, no mount command).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// gitRepo makes a repository with one commit in dir.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	gitOut(t, dir, "init", "-q", "-b", "main")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
}

func procStatusJSON(t *testing.T, bin string, args ...string) runview.Run {
	t.Helper()
	out, err := exec.Command(bin, append(args, "status", "--json")...).Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var v runview.Run
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return v
}

// TestFullWorkTreeDiskStopsTheRunForResume runs a phase whose (script)
// agent writes a file bigger than the tmpfs holding the work tree, with
// the store elsewhere. The machine's ENOSPC is not the agent's failure:
// the run stops for resume with its attempt counter unchanged, and once
// the disk has room `gaffer resume` completes it.
func TestFullWorkTreeDiskStopsTheRunForResume(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	repo := tmpfs(t, "1m")
	gitRepo(t, repo, map[string]string{"README.md": "small\n"})
	aux := t.TempDir()
	store := filepath.Join(aux, "store")
	writeTestFile(t, filepath.Join(aux, "big.txt"), strings.Repeat("0123456789abcdef\n", 128<<10)) // 2.1 MB
	writeTestFile(t, filepath.Join(aux, "plan.md"), "# Plan: big\n\n### Task 1: Write the big file\n- type: test\n- files: big.txt\n")
	writeTestFile(t, filepath.Join(aux, "script.yaml"), `developer:
  - phase: 1
    actions:
      - write: {path: big.txt, content_file: big.txt}
    summary: wrote big.txt
reviewer:
  - phase: 1
    approved: true
    comments: fine
`)
	g := []string{"--repo", repo, "--store", store}
	out, code := startProc(t, bin, append(g, "run", "--plan", filepath.Join(aux, "plan.md"), "--script",
		filepath.Join(aux, "script.yaml"), "--auto-approve", "--run-id", "r-20260101-diskfu", "--in-place"), "").wait()
	if code != ExitFailure {
		t.Fatalf("run on a full disk: exit %d, want %d\n%s", code, ExitFailure, out)
	}
	if !strings.Contains(out, "no space left on device") || !strings.Contains(out, "gaffer") || !strings.Contains(out, "resume") {
		t.Errorf("the message does not say the disk is full and how to continue:\n%s", out)
	}
	t.Logf("first run:\n%s", out)
	v := procStatusJSON(t, bin, g...)
	if v.Status != "running" || !v.Stopped || len(v.Phases) != 1 || v.Phases[0].Attempt != 1 || v.Phases[0].Review != nil {
		t.Fatalf("after ENOSPC: status %q stopped %v phases %+v, want running, stopped, phase 1 at attempt 1 without a review", v.Status, v.Stopped, v.Phases)
	}

	if out, err := exec.Command("mount", "-o", "remount,size=16m", repo).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	if out, code := startProc(t, bin, append(g, "resume"), "").wait(); code != 0 {
		t.Fatalf("resume once the disk has room: exit %d\n%s", code, out)
	}
	v = procStatusJSON(t, bin, g...)
	if v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Fatalf("after resume: status %q, phases %+v", v.Status, v.Phases)
	}
	if got := gitOut(t, repo, "show", "HEAD~1:big.txt"); len(got) < 2<<20 {
		t.Errorf("big.txt committed with %d bytes", len(got))
	}
	if st := gitOut(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean after the run:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(repo, "big.txt")); err != nil {
		t.Error(err)
	}
}
