package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// userChanges are the uncommitted changes made in the demo repository
// before a run with --allow-dirty: a tracked edit, a staged edit, a staged
// new file, an untracked file, an untracked file at a path the plan
// writes (eval.go), and an ignored file.
//
// The --allow-dirty tests run in place only (--in-place): the changes are
// put aside (refs/gaffer/stash/<run-id>) only there; a run in its own work
// tree leaves them where they are and has nothing to put aside or back.
type userChanges struct {
	dir     string
	files   map[string]string // path → the user's bytes
	status  string            // git status --porcelain before the run
	cached  string            // git diff --cached before the run
	ignored string
}

// porcelain is `git status --porcelain`, untrimmed.
func porcelain(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	return string(out)
}

func makeUserChanges(t *testing.T, dir string) userChanges {
	t.Helper()
	u := userChanges{dir: dir, files: map[string]string{
		"README.md": "# calc\n\nmy unstaged edit\n",
		"doc.go":    "// Package calc, staged by me.\npackage calc\n",
		"notes.md":  "staged new file\n",
		"todo.txt":  "untracked notes\n",
		"eval.go":   "// my own eval.go, untracked; the plan writes this path too\npackage calc\n",
	}, ignored: "x.test"}
	for p, c := range u.files {
		writeTestFile(t, filepath.Join(dir, p), c)
	}
	gitOut(t, dir, "add", "doc.go", "notes.md")
	writeTestFile(t, filepath.Join(dir, u.ignored), "ignored build output\n")
	u.status = porcelain(t, dir)
	u.cached = gitOut(t, dir, "diff", "--cached")
	return u
}

// check asserts that the user's changes are back byte for byte, staged
// entries staged and untracked files untracked, with the run's work
// committed (its eval.go in HEAD, not in the work tree), and the stash's
// ref gone.
func (u userChanges) check(t *testing.T, runID string, wantRunCommits bool) {
	t.Helper()
	for p, want := range u.files {
		b, err := os.ReadFile(filepath.Join(u.dir, p))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want the user's %q", p, b, err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(u.dir, u.ignored)); err != nil || string(b) != "ignored build output\n" {
		t.Errorf("ignored file: %q, %v", b, err)
	}
	if got := gitOut(t, u.dir, "diff", "--cached"); got != u.cached {
		t.Errorf("staged changes:\n%s\nwant\n%s", got, u.cached)
	}
	status := porcelain(t, u.dir)
	for _, want := range []string{" M README.md", "M  doc.go", "A  notes.md", "?? todo.txt"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if wantRunCommits {
		if !strings.Contains(status, " M eval.go") {
			t.Errorf("eval.go: the user's version should show as a change over the run's:\n%s", status)
		}
		if got := gitOut(t, u.dir, "show", "HEAD:eval.go"); strings.Contains(got, "my own eval.go") {
			t.Errorf("the run committed the user's eval.go:\n%s", got)
		}
	}
	for _, p := range []string{"README.md", "notes.md", "todo.txt"} {
		if out, _ := exec.Command("git", "-C", u.dir, "log", "--format=%h", "-S", u.files[p], "--all").Output(); strings.TrimSpace(string(out)) != "" && p != "README.md" {
			t.Errorf("the user's %s was committed by the run: %s", p, out)
		}
	}
	if out, err := exec.Command("git", "-C", u.dir, "rev-parse", "--verify", "-q", "refs/gaffer/stash/"+runID).Output(); err == nil {
		t.Errorf("the stash's ref is still there: %s", out)
	}
}

// dirtyDemo makes a demo repository holding the user's changes
// (makeUserChanges) and returns it, the changes, and the arguments of a
// `gaffer run` of the demo's goal there as runID with --allow-dirty and
// --in-place, then extra.
func dirtyDemo(t *testing.T, runID string, extra ...string) (string, userChanges, []string) {
	t.Helper()
	dir, _, script := demoRepo(t)
	u := makeUserChanges(t, dir)
	args := []string{"--repo", dir, "run", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script,
		"--run-id", runID, "--allow-dirty", "--in-place"}
	return dir, u, append(args, extra...)
}

// TestAllowDirtyKeepsTheUsersChanges runs the demo on a dirty tree with
// --allow-dirty: the phases run on a clean tree and commit only their own
// work, and at the end the user's tracked, staged and untracked changes
// are back byte for byte, with one line naming the path the run changed
// too.
func TestAllowDirtyKeepsTheUsersChanges(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-dirty0"
	_, u, args := dirtyDemo(t, runID, "--auto-approve")
	out, code := startProc(t, bin, args, "").wait()
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	u.check(t, runID, true)
	if !strings.Contains(out, "the run also changed eval.go: your version is in the work tree") {
		t.Errorf("no line naming eval.go:\n%s", out)
	}
}

// TestAllowDirtyKilledAtEveryCommit SIGKILLs the run at each of its
// commits (before the checkpoint) and resumes it until it completes; the
// user's changes are out of the work tree while it runs, kept by the
// stash's ref, and back at the end.
func TestAllowDirtyKilledAtEveryCommit(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-dirty1"
	dir, u, args := dirtyDemo(t, runID, "--auto-approve")
	kills := 0
	for round := 0; ; round++ {
		if round > 30 {
			t.Fatal("no progress")
		}
		p := startProc(t, bin, args, "GAFFER_TEST_PAUSE_AFTER_COMMIT=20s")
		killed := p.killAt("after-commit", 0)
		out, code := p.wait()
		if killed {
			kills++
			if round == 0 {
				if b, err := os.ReadFile(filepath.Join(dir, "todo.txt")); err == nil {
					t.Errorf("todo.txt still in the tree during the run: %q", b)
				}
				gitOut(t, dir, "rev-parse", "--verify", "refs/gaffer/stash/"+runID)
			}
		} else if code != 0 {
			t.Fatalf("round %d: exit %d\n%s", round, code, out)
		}
		if procStatus(t, bin, dir) == "completed" && !killed {
			break
		}
		args = []string{"--repo", dir, "resume"}
	}
	t.Logf("%d kills", kills)
	u.check(t, runID, true)

	// Once more, killed in restore_user_changes: the run is completed in
	// its last checkpoint, and resume still puts the changes back.
	dir, u, args = dirtyDemo(t, runID, "--auto-approve")
	p := startProc(t, bin, args, "GAFFER_TEST_PAUSE_AFTER_RESTORE=20s")
	waitOutput(t, p, "gaffer-test: restored")
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait()
	if st := procStatus(t, bin, dir); st != "completed" {
		t.Fatalf("status %q after the kill in restore", st)
	}
	gitOut(t, dir, "rev-parse", "--verify", "refs/gaffer/stash/"+runID) // still kept
	if out, _ := startProc(t, bin, []string{"--repo", dir, "status"}, "").wait(); !strings.Contains(out, "gaffer resume "+runID+" puts them back") {
		t.Errorf("status does not say how the changes come back:\n%s", out)
	}
	out, code := startProc(t, bin, []string{"--repo", dir, "resume"}, "").wait()
	if code != 0 || !strings.Contains(out, "the run also changed eval.go") {
		t.Fatalf("resume after a kill in restore: exit %d\n%s", code, out)
	}
	if kills < 3 {
		t.Errorf("only %d kills", kills)
	}
	u.check(t, runID, true)
	checkNoPhaseTwice(t, dir, "HEAD")
}

// TestAllowDirtyCancelAndReject: a run killed in phase 1 and cancelled
// puts the user's changes back on top of what it committed; a plan
// rejected before any phase leaves them where they are.
func TestAllowDirtyCancelAndReject(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	t.Run("cancel", func(t *testing.T) {
		const runID = "r-20260101-dirty2"
		dir, u, args := dirtyDemo(t, runID, "--auto-approve")
		p := startProc(t, bin, args, "GAFFER_TEST_PAUSE_AFTER_COMMIT=20s")
		if !p.killAt("after-commit", 0) {
			t.Fatal("the run ended before its first commit")
		}
		out, code := startProc(t, bin, []string{"--repo", dir, "cancel"}, "").wait()
		if code != 0 || !strings.Contains(out, "Your uncommitted changes are back") {
			t.Fatalf("cancel: exit %d\n%s", code, out)
		}
		u.check(t, runID, false)
		if st := procStatus(t, bin, dir); st != "cancelled" {
			t.Errorf("status %q", st)
		}
	})
	t.Run("reject", func(t *testing.T) {
		const runID = "r-20260101-dirty3"
		dir, u, args := dirtyDemo(t, runID)
		out, code := startProc(t, bin, args, "").wait()
		if code != ExitAwaitingApproval {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		if out, code := startProc(t, bin, []string{"--repo", dir, "reject"}, "").wait(); code != ExitRejected {
			t.Fatalf("reject: exit %d\n%s", code, out)
		}
		u.check(t, runID, false)
		if got := porcelain(t, dir); got != u.status {
			t.Errorf("status:\n%s\nwant\n%s", got, u.status)
		}
	})
}
