package cli

import (
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
	dir, plan, sp := calcRepo(t, `
developer:
  - phase: 1
    actions:
      - write: {path: calc_test.go, content: "package calc\n"}
  - phase: 2
    actions:
      - write: {path: calc.go, content: "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"}
reviewer:
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
