package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

const skipAnswer = `'{"action":"skip_phase","confidence":0.8,"category":"build_error","rationale":"the phase needs a generator this repository does not have"}'`

// skipScript fails phase 2 twice, differently (no replan), and leaves
// half-done work in the tree; the Doctor proposes skip_phase. Phase 2's
// third attempt (a human's retry) and phase 3 succeed.
var skipScript = phase1OK + `
  - phase: 2
    attempt: 1
    actions:
      - write: {path: half.txt, content: "half done\n"}
      - run: 'echo "./eval.go:3:9: undefined: parseOperand" >&2; exit 1'
  - phase: 2
    attempt: 2
    actions:
      - write: {path: half.txt, content: "still half done\n"}
      - run: 'echo "zz_generated.go: no such file or directory" >&2; exit 1'` + okN(2, 3) + phase3OK + `
doctor:
  - phase: 2
    answer: ` + skipAnswer + `
`

// askedToSkip starts h's run on skipScript's plan and returns the
// question it stops at: the Doctor's skip_phase put to the human.
func askedToSkip(t *testing.T, h *harness, cfg state.RunConfig) *Question {
	t.Helper()
	res, err := h.start(chainPlan(3), cfg)
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	q := recoveryOf(t, res.State).Question
	if q == nil || !q.OffersSkip() || q.Phase != 2 {
		t.Fatalf("question %+v, want skip_phase about phase 2", q)
	}
	var payload Question
	if err := json.Unmarshal(res.Interrupt.Payload, &payload); err != nil || !payload.OffersSkip() {
		t.Fatalf("interrupt payload %s: %v", res.Interrupt.Payload, err)
	}
	return q
}

// developerAttempts lists the developer's sessions of phase as their
// attempts.
func developerAttempts(h *harness, phase int) []int {
	devs, _ := h.rec.of(agent.RoleDeveloper)
	var out []int
	for _, d := range devs {
		if d.Phase == phase {
			out = append(out, d.Attempt)
		}
	}
	return out
}

// The Doctor's skip_phase is only a proposal: the run asks the human,
// saying which later phase depends on the phase; the human's skip
// throws the phase's work away (the tree goes back to the pre-phase
// commit, no commit of phase 2), marks it skipped and goes on with
// phase 3; the decision records say who proposed and who approved.
func TestRecoveryDoctorSkipPhaseWithTheHumansApproval(t *testing.T) {
	h := newHarness(t, skipScript)
	q := askedToSkip(t, h, on())
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || !strings.Contains(docs[0].Prompt, `| "skip_phase"`) || !strings.Contains(docs[0].Prompt, "Only the human decides") {
		t.Fatalf("%d Doctor sessions; the prompt does not offer skip_phase:\n%s", len(docs), docs[0].Prompt)
	}
	if !strings.Contains(q.Why, "the Doctor proposes skipping phase 2: the phase needs a generator") ||
		!strings.Contains(q.Why, "Later phases depend on it and would run without its work: phase 3 (task 3 depends on 2)") {
		t.Fatalf("question's why %q", q.Why)
	}
	res, err := h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true, Skip: true, Feedback: "phase 3 does not need it"}))
	s := mustDone(t, res, err, state.RunCompleted)
	if st := s.Progress.Phases[1].Status; st != state.PhaseSkipped || s.Progress.Phases[2].Status != state.PhaseCompleted {
		t.Fatalf("phase statuses %v %v", st, s.Progress.Phases[2].Status)
	}
	if got := SkippedPhases(s); len(got) != 1 || got[0] != 2 {
		t.Fatalf("SkippedPhases = %v", got)
	}
	if a := developerAttempts(h, 2); len(a) != 2 {
		t.Fatalf("phase 2's sessions %v: want its two attempts and no retry", a)
	}
	for _, sub := range h.subjects() {
		if strings.Contains(sub, "phase 2") {
			t.Fatalf("phase 2 was committed: %v", h.subjects())
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "half.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("phase 2's work is still in the tree: %v", err)
	}
	if out := h.git("show", "HEAD:more.txt"); out != "good 3" {
		t.Fatalf("phase 3's work: %q", out)
	}
	if out := h.git("status", "--porcelain", "--untracked-files=no"); out != "" {
		t.Fatalf("the tree is not clean:\n%s", out)
	}
	got := decisions(t, h, s)
	if !strings.Contains(got, "doctor:skip_phase human:skip") {
		t.Fatalf("decisions %q", got)
	}
	rs := recoveryOf(t, s)
	last := readDecision(t, h, s, rs.Decisions)
	proposal := readDecision(t, h, s, rs.Decisions-1)
	if last.Decision != "human:skip" || proposal.Decision != "doctor:skip_phase" ||
		!strings.Contains(last.Why, "phase 2 skipped: proposed by the Doctor (decision "+itoa(proposal.N)+"), approved by the human's answer skip") ||
		!strings.Contains(last.Why, "phase 3 does not need it") {
		t.Fatalf("decision records %+v, %+v", proposal, last)
	}
	// The records are committed with phase 3, the phase that follows.
	if out := h.git("show", "HEAD~1:"+decisionPath(s, last.N)); !strings.Contains(out, "human:skip") {
		t.Fatalf("the skip's record is not in phase 3's commit: %q", out)
	}
}

// A human who declines the skip gets the other answers as before: retry
// runs the phase again (its third attempt), and the run completes with
// phase 2 committed; a skip answer to a question that does not offer it
// is refused.
func TestRecoverySkipDeclinedRetries(t *testing.T) {
	h := newHarness(t, skipScript)
	askedToSkip(t, h, on())
	res, err := h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true}))
	s := mustDone(t, res, err, state.RunCompleted)
	if st := s.Progress.Phases[1].Status; st != state.PhaseCompleted {
		t.Fatalf("phase 2 %v", st)
	}
	if a := developerAttempts(h, 2); len(a) != 3 {
		t.Fatalf("phase 2's sessions %v, want 3", a)
	}
	if got := decisions(t, h, s); !strings.Contains(got, "doctor:skip_phase human:retry") || strings.Contains(got, "human:skip") {
		t.Fatalf("decisions %q", got)
	}
}

// doctor_actions without skip_phase: the prompt says it is not
// available and the answer naming it is refused as no advice.
func TestRecoveryDoctorActionsLeaveSkipPhaseOut(t *testing.T) {
	_, _, prompt := leftOut(t, skipScript, "skip_phase", "execute_fix")
	if strings.Contains(prompt, `| "skip_phase"`) {
		t.Fatalf("prompt:\n%s", prompt)
	}
}

// A skip answer given to a question that does not offer it (a
// needs_human) is a bad answer, not a skip.
func TestRecoverySkipAnswersOnlyASkipQuestion(t *testing.T) {
	h := newHarness(t, strings.Replace(skipScript, skipAnswer, `'{"action":"needs_human","confidence":0.8,"category":"build_error","rationale":"ask"}'`, 1))
	res, err := h.start(chainPlan(3), on())
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v", res.Status, err)
	}
	if q := recoveryOf(t, res.State).Question; q == nil || q.OffersSkip() {
		t.Fatalf("question %+v", q)
	}
	_, err = h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true, Skip: true}))
	if !errors.Is(err, ErrBadAnswer) {
		t.Fatalf("skip to a needs_human question: %v, want ErrBadAnswer", err)
	}
}

// Killed right after the human's skip: with the checkpoint that records
// the skip lost, the next_task step's that resets the tree and prepares
// phase 3, or a later one, the resumed run goes on into the skip —
// never a retry of phase 2, never a second question.
func TestRecoverySkipSurvivesACrash(t *testing.T) {
	marker := []byte(`"status":"skipped"`)
	skip := graph.WithResume(Answer{Approved: true, Skip: true})
	ref := newHarness(t, skipScript)
	first := ref.firstHolding(marker)
	askedToSkip(t, ref, on())
	res, err := ref.runner.Resume(context.Background(), "r-1", skip)
	mustDone(t, res, err, state.RunCompleted)
	m, puts := first.Load(), ref.store.puts.Load()
	if m == 0 {
		t.Fatalf("no checkpoint holds %s", marker)
	}
	for _, k := range []int64{m, m + 1, puts - 1} {
		h := newHarness(t, skipScript)
		h.failAt(k)
		askedToSkip(t, h, on())
		res, err := h.runner.Resume(context.Background(), "r-1", skip)
		t.Logf("checkpoint %d of %d (the skip's: %d) lost: %v", k, puts, m, err)
		res, err = h.resumeCrashed(k, res, err)
		s := mustDone(t, res, err, state.RunCompleted)
		if s.Progress.Phases[1].Status != state.PhaseSkipped {
			t.Fatalf("checkpoint %d lost: phase 2 %v", k, s.Progress.Phases[1].Status)
		}
		if a := developerAttempts(h, 2); len(a) != 2 {
			t.Fatalf("checkpoint %d lost: phase 2's sessions %v, want no retry", k, a)
		}
		if docs, _ := h.rec.of(agent.RoleDoctor); len(docs) != 1 {
			t.Fatalf("checkpoint %d lost: %d Doctor sessions", k, len(docs))
		}
		if got := decisions(t, h, s); strings.Count(got, "human:skip") != 1 || strings.Count(got, "doctor:skip_phase") != 1 {
			t.Fatalf("checkpoint %d lost: decisions %q", k, got)
		}
		if _, err := os.Stat(filepath.Join(h.dir, "half.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("checkpoint %d lost: phase 2's work is in the tree", k)
		}
	}
}

// Skipping the plan's last phase ends the run, completed, with its
// record commit on the pre-phase commit: nothing of the phase in it, the
// decision records in it.
func TestRecoverySkipOfTheLastPhaseCompletesTheRun(t *testing.T) {
	h := newHarness(t, skipScript)
	res, err := h.start(chainPlan(2), on())
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	q := recoveryOf(t, res.State).Question
	if q == nil || !q.OffersSkip() || !strings.Contains(q.Why, "the plan's last") || !strings.Contains(q.Why, "No later phase's tasks depend on it") {
		t.Fatalf("question %+v", q)
	}
	pre := res.State.Progress.Phases[1].PreCommit
	res, err = h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true, Skip: true}))
	s := mustDone(t, res, err, state.RunCompleted)
	if s.Progress.Phases[1].Status != state.PhaseSkipped {
		t.Fatalf("phase 2 %v", s.Progress.Phases[1].Status)
	}
	if parent := h.git("rev-parse", "HEAD~1"); parent != pre || !strings.HasPrefix(h.subjects()[0], "gaffer: record of") {
		t.Fatalf("HEAD~1 %s, want the pre-phase commit %s; subjects %v", parent, pre, h.subjects())
	}
	if files := h.git("ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(files, "half.txt") || !strings.Contains(files, "decision-") {
		t.Fatalf("the record commit's tree:\n%s", files)
	}
}
