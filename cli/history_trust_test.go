package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// commitTimes returns the committer times (unix seconds) of the commits
// from the newest run's branch (runRev) back, newest first, with their
// subjects.
func commitTimes(t *testing.T, dir string) (times []int64, subjects []string) {
	t.Helper()
	for _, l := range strings.Split(gitOut(t, dir, "log", "--format=%ct %at %s", runRev(t, dir)), "\n") {
		f := strings.SplitN(l, " ", 3)
		ct, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || f[0] != f[1] {
			t.Fatalf("log line %q: committer and author time differ or do not parse", l)
		}
		times, subjects = append(times, ct), append(subjects, f[2])
	}
	return times, subjects
}

// TestCommitsAreDatedWhenMade: the demo repository's only commit is from
// 2026-01-01; the run's commits are dated when they were made, not one
// second after it.
func TestCommitsAreDatedWhenMade(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	start := time.Now().Unix()
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	times, subjects := commitTimes(t, dir)
	if len(times) != 6 { // 4 phases, the record, the demo's first commit
		t.Fatalf("%d commits: %v", len(times), subjects)
	}
	base := times[len(times)-1]
	for i, ct := range times[:len(times)-1] {
		if ct < start {
			t.Errorf("%q is dated %s, before the run started (%s); the repository's first commit is %s",
				subjects[i], time.Unix(ct, 0).UTC(), time.Unix(start, 0).UTC(), time.Unix(base, 0).UTC())
		}
	}
}

// TestReproducibleDatesAreOptIn: GAFFER_REPRODUCIBLE_DATES=1 dates each
// commit one second after its parent, so two runs make the same commits.
// The runs are the built binary's, as a user's are.
func TestReproducibleDatesAreOptIn(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	env := []string{"GAFFER_REPRODUCIBLE_DATES=1"}
	var heads []string
	for range 2 {
		dir, plan, script := demoRepo(t)
		if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-repro0"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		times, subjects := commitTimes(t, dir)
		for i := 0; i+1 < len(times); i++ {
			if times[i] != times[i+1]+1 {
				t.Fatalf("%q is dated %d, want its parent's %d + 1", subjects[i], times[i], times[i+1])
			}
		}
		heads = append(heads, gitOut(t, dir, "rev-parse", runRev(t, dir)))
	}
	if heads[0] != heads[1] {
		t.Fatalf("two reproducible runs made different commits: %v", heads)
	}
}

// copyInto copies src to dir/name and returns the new path.
func copyInto(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestTheRunsOwnInputsAreNotDirt follows the README's quickstart: the
// plan, the script and gaffer.yaml sit untracked in the repository. The
// run starts, no phase commits them, and they are still there, untracked,
// at the end; with --allow-dirty they are not put aside either. The runs
// are the built binary's, as the quickstart's are.
func TestTheRunsOwnInputsAreNotDirt(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir()} // no user file
	for _, allowDirty := range []bool{false, true} {
		dir, plan, script := demoRepo(t)
		plan = copyInto(t, plan, dir, "plan.md")
		script = copyInto(t, script, dir, "agents.yaml")
		if err := os.WriteFile(filepath.Join(dir, "gaffer.yaml"), []byte("default_profile: demo\nprofiles:\n  demo:\n    driver: script\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := "?? agents.yaml\n?? gaffer.yaml\n?? plan.md"
		if !allowDirty {
			if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
		} else {
			// approve is a new process: it reads the script after the
			// stash and phase 1's reset, which must have left it there.
			writeTestFile(t, filepath.Join(dir, "notes.txt"), "mine\n")
			want = "?? agents.yaml\n?? gaffer.yaml\n?? notes.txt\n?? plan.md"
			if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--allow-dirty", "--in-place"); code != ExitAwaitingApproval {
				t.Fatalf("run --allow-dirty: exit %d\n%s", code, out)
			}
			if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "approve"); code != 0 {
				t.Fatalf("approve: exit %d\n%s", code, out)
			}
		}
		if got := gitOut(t, dir, "status", "--porcelain"); got != want {
			t.Fatalf("allow-dirty %v: git status after the run:\n%s\nwant:\n%s", allowDirty, got, want)
		}
		files := gitOut(t, dir, "log", "--format=", "--name-only", runRev(t, dir))
		for _, f := range []string{"plan.md", "agents.yaml", "gaffer.yaml", "notes.txt"} {
			for _, l := range strings.Split(files, "\n") {
				if l == f {
					t.Fatalf("allow-dirty %v: a commit took the run's input %s:\n%s", allowDirty, f, files)
				}
			}
		}
	}
}

// TestDirtyTreeErrorNamesThePaths: the refusal names up to 10 changed
// paths and says how many more there are, on one line.
func TestDirtyTreeErrorNamesThePaths(t *testing.T) {
	dir, plan, script := demoRepo(t)
	writeTestFile(t, filepath.Join(dir, "doc.go"), "package calc // changed\n")
	for i := range 12 {
		writeTestFile(t, filepath.Join(dir, fmt.Sprintf("new%02d.txt", i)), "x\n")
	}
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--in-place") // the refusal is in place only
	if code != ExitPrecondition {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitPrecondition, out)
	}
	want := "work tree has uncommitted changes (13 paths: M doc.go, ? new00.txt, ? new01.txt, ? new02.txt, ? new03.txt, " +
		"? new04.txt, ? new05.txt, ? new06.txt, ? new07.txt, ? new08.txt and 3 more) in "
	if !strings.Contains(out, want) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("got:\n%s\nwant one line with:\n%s", out, want)
	}
}
