package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/state"
)

// crashInPhase2 runs r-1 until phase 2's developer session is done and
// "dies" before its checkpoint: the resume runs phase 2's session again,
// on a dirty tree at phase 1's commit. It returns that pre-phase commit.
func crashInPhase2(t *testing.T, h *harness) string {
	t.Helper()
	h.store.fail = func(cp checkpoint.Checkpoint) bool {
		return slices.Equal(cp.Ran, []string{NodePhase}) && len(cp.Next) == 1 && cp.Step > 6
	}
	if _, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true}); err == nil {
		t.Fatal("want the injected checkpoint failure")
	}
	snap, err := h.runner.State(context.Background(), "r-1")
	if err != nil {
		t.Fatal(err)
	}
	pre := snap.State.Progress.Phases[1].PreCommit
	if pre == "" || h.git("rev-parse", "HEAD") != pre {
		t.Fatalf("HEAD %s, phase 2's pre-phase commit %q", h.git("rev-parse", "HEAD"), pre)
	}
	return pre
}

// commitAs commits the files with the message, as the user would.
func (h *harness) commitAs(msg string, files ...string) string {
	h.t.Helper()
	h.git(append([]string{"add", "--"}, files...)...)
	h.git("-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit", "-q", "-m", msg)
	return h.git("rev-parse", "HEAD")
}

func TestResumeRefusesToDropTheUsersCommit(t *testing.T) {
	h := newHarness(t, retryScript)
	pre := crashInPhase2(t, h)
	writeFile(t, h.dir, "mine.txt", "the user's work\n")
	mine := h.commitAs("my own change", "mine.txt")

	_, err := h.runner.Resume(context.Background(), "r-1")
	var hm *HeadMovedError
	if !errors.Is(err, ErrHeadMoved) || !errors.As(err, &hm) {
		t.Fatalf("resume: %v, want ErrHeadMoved", err)
	}
	if hm.Head != mine || hm.PreCommit != pre || hm.Phase != 2 {
		t.Fatalf("error names %+v, want head %s pre %s phase 2", hm, mine, pre)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "git reset --keep "+short(pre)) ||
		!strings.Contains(msg, "phase 2") || !strings.Contains(msg, short(mine)) {
		t.Fatalf("message: %q", msg)
	}
	if got := h.git("rev-parse", "HEAD"); got != mine {
		t.Fatalf("HEAD %s after the refusal, want the user's commit %s", got, mine)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "mine.txt")); err != nil {
		t.Fatalf("the user's file: %v", err)
	}

	// Following the message's advice lets the run go on.
	h.git("branch", "saved")
	h.git("reset", "-q", "--keep", pre)
	res, err := h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
	if got := h.git("rev-parse", "saved"); got != mine {
		t.Fatalf("saved branch %s", got)
	}
}

func TestResumeResetsTheRunsOwnCommit(t *testing.T) {
	h := newHarness(t, retryScript)
	pre := crashInPhase2(t, h)
	own := h.commitAs("phase 2: half done\n\nGaffer-Run: r-1\nGaffer-Phase: 2\nGaffer-Attempt: 9", "impl.txt")
	if own == pre {
		t.Fatal("no commit made")
	}
	res, err := h.runner.Resume(context.Background(), "r-1")
	s := mustDone(t, res, err, state.RunCompleted)
	if got := h.git("rev-parse", "HEAD~2"); got != pre {
		t.Fatalf("HEAD~2 %s, want the pre-phase commit %s (the run's own commit reset away)", got, pre)
	}
	if s.Progress.Phases[1].PreCommit != pre {
		t.Fatalf("pre-commit changed: %s", s.Progress.Phases[1].PreCommit)
	}
}

func TestResumeRefusesAnotherRunsCommit(t *testing.T) {
	h := newHarness(t, retryScript)
	crashInPhase2(t, h)
	other := h.commitAs("phase 2: a fork's\n\nGaffer-Run: r-other\nGaffer-Phase: 2\nGaffer-Attempt: 1", "impl.txt")
	_, err := h.runner.Resume(context.Background(), "r-1")
	if !errors.Is(err, ErrHeadMoved) {
		t.Fatalf("resume: %v, want ErrHeadMoved", err)
	}
	if got := h.git("rev-parse", "HEAD"); got != other {
		t.Fatalf("HEAD %s, want %s", got, other)
	}
}

func TestHaltRefusesToDropACommitThatIsNotTheRuns(t *testing.T) {
	h := newHarness(t, phase1OK+`
  - phase: 2
    actions:
      - write: {path: impl.txt, content: "bad\n"}
      - run: git add impl.txt && git -c user.name=u -c user.email=u@example.invalid commit -q -m "not gaffer's"
reviewer:
  - phase: 2
    approved: false
    comments: still wrong
`)
	_, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true, Limits: state.Limits{MaxPhaseAttempts: 1}})
	if !errors.Is(err, ErrHeadMoved) {
		t.Fatalf("run: %v, want ErrHeadMoved", err)
	}
	if got := h.git("log", "-1", "--format=%s"); got != "not gaffer's" {
		t.Fatalf("HEAD is %q: the commit was reset away", got)
	}
}

func TestExecDirAndRecordNameTheRun(t *testing.T) {
	h := newHarness(t, retryScript)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	if want := "docs/gaffer/2026-01-02-1-build-it"; s.Run.ExecDir != want {
		t.Fatalf("exec dir %q, want %q (the run id's suffix in place of a tracker id)", s.Run.ExecDir, want)
	}
	js := h.git("show", "HEAD:"+s.Run.ExecDir+"/execution-state.json")
	if !strings.Contains(js, `"run_id": "r-1"`) {
		t.Fatalf("execution-state.json lacks the run id:\n%s", js)
	}
}

func TestHaltKeepsTheAgentsErrorAndTheReview(t *testing.T) {
	h := newHarness(t, `
developer:
  - phase: 1
    actions:
      - write: {path: one.txt, content: "1\n"}
      - run: "printf 'go build failed\\n\\n./calc.go:3:1: undefined: Add\\n' >&2; exit 2"
`)
	res, err := h.start(taskPlan, state.RunConfig{AutoApprove: true, Limits: state.Limits{MaxTaskReviewIterations: 2}})
	s := mustDone(t, res, err, state.RunHalted)
	last := s.Errors[len(s.Errors)-1]
	if !strings.HasPrefix(last, "phase 1 halted after 1 attempt(s), the last with 2 session(s): the developer agent reported failure: ") ||
		!strings.Contains(last, "go build failed") || !strings.Contains(last, "undefined: Add") || strings.Contains(last, "\n") {
		t.Fatalf("halt message %q lacks the agent's error", last)
	}
	ps := s.Progress.Phases[0]
	if ps.Status != state.PhaseFailed || ps.CompletedAt.IsZero() || ps.CompletedAt.Before(ps.StartedAt) {
		t.Fatalf("halted phase: status %v, started %v, completed %v", ps.Status, ps.StartedAt, ps.CompletedAt)
	}
	if ps.Review == nil || ps.Review.Approved || !strings.Contains(ps.Review.Comments, "undefined: Add") {
		t.Fatalf("the halted phase's review is not kept: %+v", ps.Review)
	}
	if ps.Error == "" || !strings.Contains(ps.Error, "undefined: Add") {
		t.Fatalf("phase error %q", ps.Error)
	}
}

func TestHaltMessageOfAReviewerRejection(t *testing.T) {
	h := newHarness(t, phase1OK+`
reviewer:
  - phase: 1
    approved: false
    comments: "Not good enough:\n\nthe test asserts nothing"
`)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true, Limits: state.Limits{MaxPhaseAttempts: 1}})
	s := mustDone(t, res, err, state.RunHalted)
	if last := s.Errors[len(s.Errors)-1]; !strings.HasSuffix(last, ": Not good enough: | the test asserts nothing") {
		t.Fatalf("halt message %q", last)
	}
	if ps := s.Progress.Phases[0]; ps.CompletedAt.IsZero() || ps.Review == nil || !strings.Contains(ps.Review.Comments, "asserts nothing") {
		t.Fatalf("halted phase: %+v", ps)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("x", maxCauseRunes+10)
	for in, want := range map[string]string{
		"":                         "",
		"one":                      "one",
		"  a:\n\n  b  \n":          "a: | b",
		"1\n2\n3\n4\n5\n6\n7\n8\n": "1 | 2 | 3 | 4 | 5 | 6 …",
		long:                       long[:maxCauseRunes] + " …",
	} {
		if got := excerpt(in); got != want {
			t.Errorf("excerpt(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArchitectSessionErrorNamesTheRevision(t *testing.T) {
	h := newHarness(t, retryScript) // no architect entry: its session fails
	_, err := h.start("", state.RunConfig{AutoApprove: true})
	if err == nil || !strings.Contains(err.Error(), "architect session (revision 0)") || strings.Contains(err.Error(), "phase 0") {
		t.Fatalf("error %v, want it to name the architect's revision, not phase 0", err)
	}
	if got := sessionLabel(agent.Session{Role: agent.RoleDeveloper, Phase: 2, Attempt: 1, Iteration: 3}); got != "developer session (phase 2, attempt 1, iteration 3)" {
		t.Fatalf("developer label %q", got)
	}
}
