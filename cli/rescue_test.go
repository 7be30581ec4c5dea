package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestResetKeepsWhatItFinds changes the work tree while a run waits for
// approval (a tracked edit, a staged new file) and while it is stopped
// between phases (a new untracked file, killed with SIGKILL): the resets
// that start the next phase used to discard those changes silently. Now
// each says in one line which commit keeps them, and `git stash apply`
// puts them back byte for byte; a retry of a session this process ran
// keeps nothing (it only undoes that session's work). It does so in place
// and in the run's own work tree.
func TestResetKeepsWhatItFinds(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	for _, m := range runModes {
		t.Run(m.name, func(t *testing.T) { resetKeepsWhatItFinds(t, bin, m) })
	}
}

// resetKeepsWhatItFinds is TestResetKeepsWhatItFinds in mode m: the
// changes are made where the run works (its own work tree, away from the
// user's checkout, which must stay as it was).
func resetKeepsWhatItFinds(t *testing.T, bin string, m runMode) {
	root, plan, script := demoRepo(t)
	untouched := m.untouched(t, root)
	if out, code := gafferCmd(t, bin, m.args("--repo", root, "run", "--plan", plan, "--script", script, "--run-id", "r-rescue")...); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	dir := m.workDir(root, "r-rescue")
	gomod := filepath.Join(dir, "go.mod")
	orig, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(orig) + "// the user's edit\n"
	writeTestFile(t, gomod, edited)
	writeTestFile(t, filepath.Join(dir, "staged.txt"), "staged by the user\n")
	gitOut(t, dir, "add", "staged.txt")

	// Approve in a process that is killed while phase 2's session works,
	// and leave a new file while it is stopped.
	began := time.Now().Unix()
	p := startProc(t, bin, []string{"--repo", root, "approve", "r-rescue", "--pace", "40ms"}, "")
	waitOutput(t, p, "[developer p2 a1")
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out1, _ := p.wait()
	writeTestFile(t, filepath.Join(dir, "notes.txt"), "written while the run was stopped\n")
	out2, code := gafferCmd(t, bin, "--repo", root, "resume", "r-rescue")
	if code != ExitOK {
		t.Fatalf("resume: exit %d\n%s", code, out2)
	}
	re := regexp.MustCompile("are kept in commit ([0-9a-f]+) \\((refs/gaffer/rescue/r-rescue/p[0-9]+-a1-[^)]+)\\): `git stash apply ([^`]+)` puts them back")
	var hashes, refs []string
	for _, out := range []string{out1, out2} {
		for _, m := range re.FindAllStringSubmatch(out, -1) {
			if m[2] != m[3] {
				t.Errorf("the notice names %s and applies %s", m[2], m[3])
			}
			if !strings.HasPrefix(gitOut(t, root, "rev-parse", m[2]), m[1]) {
				t.Errorf("the notice's ref %s is not its commit %s", m[2], m[1])
			}
			hashes, refs = append(hashes, m[1]), append(refs, m[2])
		}
	}
	if len(hashes) != 2 {
		t.Fatalf("want two notices (phase 1 after the approval, the next phase after the resume), got %d:\n%s\n---\n%s", len(hashes), out1, out2)
	}
	// Issue 23 item 8f: each rescue is dated when it happened, not one
	// second after its parent (the demo's commits are years old).
	ended := time.Now().Unix()
	for _, h := range hashes {
		var ct int64
		if _, err := fmt.Sscan(gitOut(t, root, "log", "-1", "--format=%ct", h), &ct); err != nil || ct < began || ct > ended {
			t.Errorf("rescue %s is dated %d, want between %d and %d (%v)", h, ct, began, ended, err)
		}
	}
	if refs := strings.Fields(gitOut(t, root, "for-each-ref", "--format=%(refname)", "refs/gaffer/rescue/")); len(refs) != 2 {
		t.Errorf("rescue refs %v, want 2 (the demo's retry in phase 2 keeps nothing)", refs)
	}
	untouched("after the run")
	m.workTreeGone(t, root, "r-rescue")
	if !m.inPlace {
		// The run's work tree is gone with its end: its changes come back
		// in a new one at its branch.
		dir = filepath.Join(t.TempDir(), "applied")
		gitOut(t, root, "worktree", "add", "--detach", dir, m.rev("r-rescue"))
		gomod = filepath.Join(dir, "go.mod")
	}
	// The run's result is untouched by the user's changes...
	if strings.Contains(gitOut(t, dir, "log", "-p", "--format=%s", m.rev("r-rescue")), "the user's edit") {
		t.Errorf("the user's edit was committed as the run's")
	}
	// ...and both sets come back byte for byte.
	gitOut(t, dir, "stash", "apply", refs[0]) // as the notice says
	if got, _ := os.ReadFile(gomod); string(got) != edited {
		t.Errorf("go.mod after apply:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "staged.txt")); string(got) != "staged by the user\n" {
		t.Errorf("staged.txt after apply: %q", got)
	}
	if got := gitOut(t, dir, "show", hashes[1]+":notes.txt"); got != "written while the run was stopped" {
		t.Errorf("notes.txt in the second rescue: %q", got)
	}
}

// TestUserEditDuringLanesIsKept: while phase 1's two lanes work in their
// own trees, the user writes a file into the run's tree (in place: the
// checkout). The lanes' combine does not take it for their work: it is
// kept by a rescue ref, named in a notice, before the tree is reset, and
// the phase's commit does not hold it. In the same process, with no
// crash: nothing the run did not write is ever lost or committed.
func TestUserEditDuringLanesIsKept(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	// Each lane sleeps after its write: the edit is made while both work.
	dir, p := startTwoLanes(t, bin, "1", "r-lanes-edit", "--in-place")
	p.awaitOutput(t, "phase 1's lanes both wrote", func(out string) bool {
		return strings.Count(out, "[developer p1 a1 i1] write") == 2
	})
	const mine = "the user's note, written while the lanes worked\n"
	writeTestFile(t, filepath.Join(dir, "mine.txt"), mine)
	out, code := p.wait()
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`are kept in commit [0-9a-f]+ \((refs/gaffer/rescue/r-lanes-edit/p1-a1-[^)]+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no notice of the kept change for phase 1:\n%s", out)
	}
	if got := gitOut(t, dir, "show", m[1]+":mine.txt"); got+"\n" != mine {
		t.Fatalf("the rescue ref's mine.txt = %q", got)
	}
	if files := gitOut(t, dir, "log", "--name-only", "--format=", "-E", "--grep=^phase 1"); strings.Contains(files, "mine.txt") {
		t.Fatalf("phase 1's commit holds the user's file:\n%s", files)
	}
}
