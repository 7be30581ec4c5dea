package cli

import (
	"os"
	"strings"
	"testing"
)

// Issue 37 through the binary: the workflow's own rules, checked against
// the seeds.

// lsRun lists the files of rev whose path contains part.
func lsRun(t *testing.T, dir, rev, part string) []string {
	t.Helper()
	var out []string
	for _, f := range strings.Fields(gitOut(t, dir, "ls-tree", "-r", "--name-only", rev)) {
		if strings.Contains(f, part) {
			out = append(out, f)
		}
	}
	return out
}

// Item 2: a review whose only item is deferred is an approval. The run
// completes at the first attempt, exit 0; the item is in phase 2's
// committed review-feedback.md and in the run's end summary.
func TestDeferOnlyReviewIsAnApproval(t *testing.T) {
	t.Parallel()
	dir, plan, sp := calcRepo(t, developerScript(passCalcPhase1, session(2, "", writeCalc))+`reviewer:
  - phase: 2
    approved: false
    comments: works; one nit
    items:
      - {text: name the operands x and y, disposition: DEFER, reason: "style, not this phase"}
`)
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-nits")
	if code != 0 {
		t.Fatalf("run: exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "phase 2: DEFER: name the operands x and y (style, not this phase)") {
		t.Errorf("the end summary does not name the deferred item:\n%s", out)
	}
	rev := runRev(t, dir)
	if got := gitOut(t, dir, "log", "-1", "--skip=1", "--format=%s%n%(trailers:key=Gaffer-Attempt,valueonly)", rev); !strings.HasPrefix(got, "phase 2") || !strings.HasSuffix(got, "1") {
		t.Errorf("phase 2's commit: %q, want attempt 1", got)
	}
	fb := lsRun(t, dir, rev, "phase-2/review-feedback.md")
	if len(fb) != 1 {
		t.Fatalf("phase 2's review-feedback.md is not committed: %v", fb)
	}
	text := gitOut(t, dir, "show", rev+":"+fb[0])
	if !strings.Contains(text, "Attempt 1 approved: nothing to act on now") || !strings.Contains(text, "- name the operands x and y (style, not this phase)") {
		t.Errorf("review-feedback.md:\n%s", text)
	}
}

// wholePlanText has no task headings: it is one task, the whole plan.
const wholePlanText = `# Plan: a notes file

Write NOTES.md with one line, "notes", so the repository has notes.
`

// Item 5: a plan without tasks runs as one task, the whole plan in one
// session, and the plan check says so.
func TestPlanWithoutTasksRunsAsOneTask(t *testing.T) {
	t.Parallel()
	dir, plan, sp := recoveryRepo(t, `
developer:
  - phase: 1
    actions:
      - write: {path: NOTES.md, content: "notes\n"}
`)
	writeFile(t, plan, wholePlanText)
	out, code := bin(t, "plan", "validate", plan)
	if code != 0 || !strings.Contains(out, "1 task in 1 phase (task mode)") || !strings.Contains(out, "it runs as one task, the whole plan in one session") {
		t.Fatalf("plan validate: exit %d\n%s", code, out)
	}
	out, code = bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-whole")
	if code != 0 || !strings.Contains(out, "it runs as one task, the whole plan in one session") {
		t.Fatalf("run: exit %d, want 0 and the plan check's word\n%s", code, out)
	}
	rev := runRev(t, dir)
	if got := gitOut(t, dir, "show", rev+"~1:NOTES.md"); got != "notes" {
		t.Errorf("NOTES.md = %q", got)
	}
	if got := gitOut(t, dir, "log", "--format=%s", rev+"~1", "-1"); got != "phase 1: the whole plan" {
		t.Errorf("the phase's commit: %q", got)
	}
	if out, code := bin(t, "plan", "validate", plan+".missing"); code == 0 {
		t.Errorf("a missing plan validated:\n%s", out)
	}
}

// twoTestsPlan has two independent test tasks and their impl: phased, two
// phases; with mode: task, three, in the plan's order.
const twoTestsPlan = `# Plan: two tests

### Task 1: test a
- type: test
- depends on: none

### Task 2: test b
- type: test
- depends on: none

### Task 3: implement
- type: impl
- depends on: 1, 2
`

// Item 5: a profile's mode: task turns phased execution off; a mode no
// one knows is refused when the file is read, with its line.
func TestProfileModeTaskRunsOneTaskPerPhase(t *testing.T) {
	t.Parallel()
	script := developerScript(
		session(1, "", `write: {path: a_test.txt, content: "a\n"}`),
		session(2, "", `write: {path: b_test.txt, content: "b\n"}`),
		session(3, "", `write: {path: impl.txt, content: "i\n"}`),
	)
	for _, c := range []struct {
		mode   string
		phases int
	}{{"auto", 2}, {"task", 3}} {
		dir, plan, sp := recoveryRepo(t, script)
		writeFile(t, plan, twoTestsPlan)
		writeFile(t, dir+"/gaffer.yaml", "profiles:\n  default:\n    mode: "+c.mode+"\n")
		out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-"+c.mode)
		if code != 0 {
			t.Fatalf("mode %s: exit %d\n%s", c.mode, code, out)
		}
		var phases int
		for _, s := range strings.Split(gitOut(t, dir, "log", "--format=%s", runRev(t, dir)), "\n") {
			if strings.HasPrefix(s, "phase ") {
				phases++
			}
		}
		if phases != c.phases {
			t.Errorf("mode %s: %d phase commits, want %d", c.mode, phases, c.phases)
		}
	}
	dir, plan, sp := recoveryRepo(t, script)
	writeFile(t, plan, twoTestsPlan)
	writeFile(t, dir+"/gaffer.yaml", "profiles:\n  default:\n    mode: lanes\n")
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve")
	if code != ExitInvalid || !strings.Contains(out, `gaffer.yaml:3: mode must be auto, task or phased, not "lanes"`) {
		t.Fatalf("an unknown mode: exit %d, want %d naming the line\n%s", code, ExitInvalid, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Item 8: the human's feedback is a Task Story record. A plan rejected
// with --feedback leaves a user record that phase 1 commits and whose
// requirement the story so far keeps; so does an answer to recovery's
// question.
func TestHumanFeedbackIsAStoryRecord(t *testing.T) {
	t.Parallel()
	t.Run("plan feedback", func(t *testing.T) {
		t.Parallel()
		dir, _, sp := recoveryRepo(t, `
architect:
  - plan: "# Plan: two files\n\n### Task 1: test\n- type: test\n- depends on: none\n\n### Task 2: impl\n- type: impl\n- depends on: 1\n"
developer:
  - phase: 1
    actions:
      - write: {path: a_test.txt, content: "t\n"}
  - phase: 2
    actions:
      - write: {path: impl.txt, content: "i\n"}
`)
		if out, code := bin(t, "--repo", dir, "run", "--goal", "two files", "--script", sp, "--run-id", "r-fb"); code != ExitAwaitingApproval {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		if out, code := bin(t, "--repo", dir, "reject", "r-fb", "--feedback", "name the test file a_test.txt"); code != ExitAwaitingApproval {
			t.Fatalf("reject --feedback: exit %d, want the revised plan waiting\n%s", code, out)
		}
		if out, code := bin(t, "--repo", dir, "approve", "r-fb"); code != 0 {
			t.Fatalf("approve: exit %d\n%s", code, out)
		}
		rev := runRev(t, dir)
		recs := lsRun(t, dir, rev+"~2", "/story/001-user-p0-a0.json")
		if len(recs) != 1 {
			t.Fatalf("phase 1's commit has no user record: %v", lsRun(t, dir, rev+"~2", "/story/"))
		}
		rec := gitOut(t, dir, "show", rev+"~2:"+recs[0])
		if !strings.Contains(rec, `"role": "user"`) || !strings.Contains(rec, "The user asked: name the test file a_test.txt") ||
			!strings.Contains(rec, "rejected plan revision 0 with feedback") {
			t.Errorf("the user record:\n%s", rec)
		}
		sum := lsRun(t, dir, rev, "phase-1/summary.md")
		if len(sum) != 1 || !strings.Contains(gitOut(t, dir, "show", rev+":"+sum[0]), "The user asked: name the test file a_test.txt") {
			t.Errorf("phase 1's story so far does not keep the user's requirement: %v", sum)
		}
	})
	t.Run("recovery answer", func(t *testing.T) {
		t.Parallel()
		dir, plan, sp := replanRepo(t, narrowReplan)
		if out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-ans"); code != ExitAwaitingApproval {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		if out, code := bin(t, "--repo", dir, "approve", "r-ans", "--decision", "retry", "--feedback", "keep every case; use a table"); code != 0 {
			t.Fatalf("approve --decision retry: exit %d\n%s", code, out)
		}
		rev := runRev(t, dir)
		var found bool
		for _, f := range lsRun(t, dir, rev, "/story/") {
			if strings.Contains(f, "-user-p2-") {
				rec := gitOut(t, dir, "show", rev+":"+f)
				found = strings.Contains(rec, "The user asked: keep every case; use a table") && strings.Contains(rec, "with another attempt")
			}
		}
		if !found {
			t.Errorf("no user record of the answer: %v", lsRun(t, dir, rev, "/story/"))
		}
	})
}

// declaredPlan declares each task's files; the script's phase 1 writes
// one more file than its task declares.
const declaredPlan = `# Plan: declared files

### Task 1: test
- type: test
- depends on: none
- files: a_test.txt

### Task 2: impl
- type: impl
- depends on: 1
- files: impl.txt
`

var declaredScript = developerScript(
	session(1, "", `write: {path: a_test.txt, content: "t\n"}`, `write: {path: extra.txt, content: "not declared\n"}`),
	session(2, "", `write: {path: impl.txt, content: "i\n"}`),
)

// Item 4: after each session the changed paths no task declared, and the
// declared files left untouched, are told (an event, shown by the run);
// with strict_files: true either list is a failed attempt.
func TestDeclaredFilesAreChecked(t *testing.T) {
	t.Parallel()
	t.Run("told", func(t *testing.T) {
		t.Parallel()
		dir, plan, sp := recoveryRepo(t, declaredScript)
		writeFile(t, plan, declaredPlan)
		out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-told")
		if code != 0 || !strings.Contains(out, "phase 1 attempt 1: changed files no task declares: extra.txt") {
			t.Fatalf("run: exit %d, want 0 and the undeclared file told\n%s", code, out)
		}
		if strings.Contains(out, "phase 2 attempt 1: changed files") || strings.Contains(out, "declared files not created") {
			t.Errorf("phase 2 kept to its files but was told otherwise:\n%s", out)
		}
	})
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		dir, plan, sp := recoveryRepo(t, declaredScript)
		writeFile(t, plan, declaredPlan)
		writeFile(t, dir+"/gaffer.yaml", "profiles:\n  default:\n    strict_files: true\n    recovery: {enabled: false}\n")
		out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-strict")
		if code != ExitHalted || !strings.Contains(out, "strict_files: the session did not keep to its tasks' declared files: changed files no task declares: extra.txt") {
			t.Fatalf("run: exit %d, want %d with the list as the error\n%s", code, ExitHalted, out)
		}
		if strings.Contains(out, "review of phase 1") {
			t.Errorf("the reviewer judged an attempt strict_files failed:\n%s", out)
		}
	})
}

// Item 3: a rejected attempt is kept under refs/gaffer/attempts/RUN/pN-aM
// until the run is deleted.
func TestFailedAttemptIsKeptUntilTheRunIsDeleted(t *testing.T) {
	t.Parallel()
	dir, plan, sp := calcRepo(t, developerScript(passCalcPhase1,
		session(2, "attempt: 1", `write: {path: calc.go, content: "package calc // attempt 1\n"}`),
		session(2, "attempt: 2", `write: {path: calc.go, content: "package calc // attempt 2\n"}`),
	)+`reviewer:
  - phase: 2
    attempt: 1
    approved: false
    comments: calc.go has no Add
    items:
      - {text: write Add, disposition: IMPLEMENT}
`)
	if out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-keep"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	ref := "refs/gaffer/attempts/r-keep/p2-a1"
	if got := gitOut(t, dir, "show", ref+":calc.go"); got != "package calc // attempt 1" {
		t.Fatalf("%s holds calc.go %q", ref, got)
	}
	out, code := bin(t, "--repo", dir, "delete", "r-keep")
	if code != 0 {
		t.Fatalf("delete: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "for-each-ref", "refs/gaffer/attempts/"); got != "" {
		t.Fatalf("attempt refs left after the run's deletion: %s", got)
	}
}
