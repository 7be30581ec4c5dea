package nodes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/atomicfile"
	"github.com/gaffer-dev/gaffer/state"
)

const twoPhasePlan = `# Plan: two phases

### Task 1: write the test
- type: test
- depends on: none

### Task 2: implement
- type: impl
- depends on: 1
`

const retryScript = phase1OK + `
  - phase: 2
    attempt: 1
    actions:
      - write: {path: impl.txt, content: "v1\n"}
      - write: {path: scratch.txt, content: "junk\n"}
  - phase: 2
    attempt: 2
    actions:
      - write: {path: impl.txt, content: "v2\n"}
reviewer:
  - phase: 2
    attempt: 1
    approved: false
    comments: impl.txt is wrong
    items:
      - {text: write v2, disposition: IMPLEMENT}
      - {text: rename everything, disposition: DEFER, reason: later}
`

func TestPhasedRunCommitsPerPhaseAndRetryLeavesNoTrace(t *testing.T) {
	h := newHarness(t, retryScript)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)

	want := []string{"gaffer: record of build-it", "phase 2: implement", "phase 1: write the test", "initial"}
	if got := h.subjects(); !slices.Equal(got, want) {
		t.Fatalf("commits %q, want %q", got, want)
	}
	if got := h.git("log", "-1", "--skip=1", "--format=%(trailers:only,unfold)"); got != "Gaffer-Run: r-1\nGaffer-Phase: 2\nGaffer-Attempt: 2" {
		t.Fatalf("phase 2 trailers:\n%s", got)
	}
	// The failed attempt left nothing: no file, no commit, nothing in any tree.
	if _, err := os.Stat(filepath.Join(h.dir, "scratch.txt")); !os.IsNotExist(err) {
		t.Fatalf("scratch.txt of the failed attempt survived: %v", err)
	}
	if out := h.git("log", "--exclude=refs/gaffer/attempts/*", "--all", "--format=%h", "--", "scratch.txt"); out != "" {
		t.Fatalf("scratch.txt was committed: %s", out)
	}
	// Only the failed attempt's own ref keeps it, on the pre-phase
	// commit, and the retry's prompt names it with its diff stat.
	kept := "refs/gaffer/attempts/r-1/p2-a1"
	if got := h.git("show", "--format=", "--name-only", kept); got != "impl.txt\nscratch.txt" {
		t.Fatalf("git show %s: %q", kept, got)
	}
	if diff := h.git("show", kept); !strings.Contains(diff, "+v1") || !strings.Contains(diff, "+junk") {
		t.Fatalf("git show %s does not show the failed attempt's diff:\n%s", kept, diff)
	}
	if got, want := h.git("rev-parse", kept+"^"), s.Progress.Phases[0].PostCommit; got != want {
		t.Fatalf("the kept attempt's parent is %s, want the pre-phase commit %s", got, want)
	}
	if got := h.git("show", "HEAD:impl.txt"); got != "v2" {
		t.Fatalf("impl.txt = %q", got)
	}
	// The user's untracked file is neither touched nor committed.
	if b, err := os.ReadFile(filepath.Join(h.dir, "notes.txt")); err != nil || string(b) != "the user's own notes\n" {
		t.Fatalf("notes.txt: %q, %v", b, err)
	}
	if out := h.git("log", "--all", "--format=%h", "--", "notes.txt"); out != "" {
		t.Fatalf("notes.txt was committed: %s", out)
	}
	if got := h.git("status", "--porcelain"); got != "?? notes.txt" {
		t.Fatalf("git status:\n%s", got)
	}

	// The rejection stays in the phase's state beside the approval that
	// followed it (the inbox's phase card shows it).
	if ps := s.Progress.Phases[1]; ps.Review == nil || !ps.Review.Approved || len(ps.Rejections) != 1 ||
		ps.Rejections[0].Attempt != 1 || ps.Rejections[0].Iteration != 1 || ps.Rejections[0].Review.Approved ||
		ps.Rejections[0].Review.Comments != "impl.txt is wrong" || len(ps.Rejections[0].Review.Items) != 2 {
		t.Fatalf("phase 2's reviews: latest %+v, rejections %+v", ps.Review, ps.Rejections)
	}
	if n := len(s.Progress.Phases[0].Rejections); n != 0 {
		t.Fatalf("phase 1 has %d rejections, want none", n)
	}

	// The execution directory is committed, and the summary's commands work.
	ex := s.Run.ExecDir
	for _, f := range []string{"plan.md", "execution-state.json", "phase-1/summary.md", "phase-2/summary.md", "phase-2/review-feedback.md"} {
		h.git("cat-file", "-e", "HEAD:"+ex+"/"+f)
	}
	fb := h.git("show", "HEAD:"+ex+"/phase-2/review-feedback.md")
	if !strings.Contains(fb, "write v2") || !strings.Contains(fb, "rename everything") {
		t.Fatalf("review-feedback.md:\n%s", fb)
	}
	sum := h.git("show", "HEAD:"+ex+"/phase-2/summary.md")
	m := regexp.MustCompile("`git diff ([0-9a-f]{40})\\.\\.([0-9a-f]{40})`").FindStringSubmatch(sum)
	if m == nil {
		t.Fatalf("no git diff command in the summary:\n%s", sum)
	}
	if diff := h.git("diff", m[1]+".."+m[2], "--", "impl.txt"); !strings.Contains(diff, "+v2") {
		t.Fatalf("git diff %s..%s does not show phase 2's change:\n%s", m[1], m[2], diff)
	}
	if m[2] != s.Progress.Phases[1].PostCommit || m[1] != s.Progress.Phases[0].PostCommit {
		t.Fatalf("summary names %s..%s, state has %s..%s", m[1], m[2], s.Progress.Phases[0].PostCommit, s.Progress.Phases[1].PostCommit)
	}
	// The retry was a fresh session whose prompt carries the review.
	devs, ids := h.rec.of(agent.RoleDeveloper)
	if len(devs) != 3 || devs[2].Attempt != 2 || devs[2].SessionID != "" || ids[1] == ids[2] {
		t.Fatalf("developer sessions: %+v ids %q", devs, ids)
	}
	if !strings.Contains(devs[2].Prompt, "impl.txt is wrong") || !strings.Contains(devs[2].Prompt, "Retry attempt 2") {
		t.Fatalf("retry prompt lacks the review:\n%s", devs[2].Prompt)
	}
	if p := devs[2].Prompt; !strings.Contains(p, "`git show refs/gaffer/attempts/r-1/p2-a1` shows its diff") ||
		!strings.Contains(p, "impl.txt (+1 -0)\nscratch.txt (+1 -0)\n") {
		t.Fatalf("retry prompt does not name the failed attempt's ref and stat:\n%s", p)
	}
	if strings.Contains(devs[1].Prompt, "refs/gaffer/attempts/") {
		t.Fatalf("the first attempt's prompt names a kept attempt:\n%s", devs[1].Prompt)
	}
}

func TestHaltAtAttemptLimitLeavesCleanTreeAtLastGoodCommit(t *testing.T) {
	h := newHarness(t, phase1OK+`
  - phase: 2
    actions:
      - write: {path: impl.txt, content: "bad\n"}
reviewer:
  - phase: 2
    approved: false
    comments: still wrong
`)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunHalted)
	if got := h.git("rev-parse", "HEAD"); got != s.Progress.Phases[0].PostCommit {
		t.Fatalf("HEAD %s, want phase 1's commit %s", got, s.Progress.Phases[0].PostCommit)
	}
	if got := h.git("status", "--porcelain", "--ignored"); got != "?? notes.txt" {
		t.Fatalf("tree not clean after the halt:\n%s", got)
	}
	ps := s.Progress.Phases[1]
	if ps.Status != state.PhaseFailed || ps.Attempt != 2 {
		t.Fatalf("phase 2: %v attempt %d", ps.Status, ps.Attempt)
	}
	if len(s.Errors) == 0 || !strings.Contains(s.Errors[len(s.Errors)-1], "phase 2 halted") {
		t.Fatalf("errors: %q", s.Errors)
	}
	if devs, _ := h.rec.of(agent.RoleDeveloper); len(devs) != 3 {
		t.Fatalf("%d developer sessions, want 3", len(devs))
	}
}

func TestAgentFailureIsARejectedAttemptWithItsError(t *testing.T) {
	h := newHarness(t, `
developer:
  - phase: 1
    attempt: 1
    actions:
      - write: {path: half.txt, content: "x\n"}
      - run: echo "compile error in half.txt" >&2; exit 3
  - phase: 1
    attempt: 2
    actions:
      - write: {path: a_test.txt, content: "test\n"}
`)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	mustDone(t, res, err, state.RunCompleted)
	if revs, _ := h.rec.of(agent.RoleReviewer); len(revs) != 2 {
		t.Fatalf("the reviewer was asked %d times, want 2 (not for the failed attempt)", len(revs))
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if !strings.Contains(devs[1].Prompt, "compile error in half.txt") {
		t.Fatalf("retry prompt lacks the agent's error:\n%s", devs[1].Prompt)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "half.txt")); !os.IsNotExist(err) {
		t.Fatal("the failed attempt's file survived the reset")
	}
}

func TestTaskModeKeepsTheSessionAcrossReviewIterations(t *testing.T) {
	h := newHarness(t, `
developer:
  - phase: 1
    actions:
      - write: {path: one.txt, content: "1\n"}
  - phase: 2
    actions:
      - write: {path: two.txt, content: "2\n"}
reviewer:
  - {phase: 1, iteration: 1, approved: false, comments: "not yet (1)"}
  - {phase: 1, iteration: 2, approved: false, comments: "not yet (2)"}
`)
	res, err := h.start(taskPlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	if s.Plan.Mode != state.ModeTask {
		t.Fatalf("mode %v", s.Plan.Mode)
	}
	devs, ids := h.rec.of(agent.RoleDeveloper)
	if len(devs) != 4 {
		t.Fatalf("%d developer sessions, want 4", len(devs))
	}
	for i := 0; i < 3; i++ {
		if devs[i].Phase != 1 || devs[i].Iteration != i+1 || ids[i] != ids[0] {
			t.Fatalf("task 1 session %d: phase %d iteration %d id %q (first %q)", i, devs[i].Phase, devs[i].Iteration, ids[i], ids[0])
		}
		if i > 0 && devs[i].SessionID != ids[0] {
			t.Fatalf("iteration %d did not continue the session: %q", i+1, devs[i].SessionID)
		}
	}
	if devs[3].SessionID != "" || ids[3] == ids[0] {
		t.Fatalf("task 2 did not get a fresh session: %q / %q", devs[3].SessionID, ids[3])
	}
	if !strings.Contains(devs[2].Prompt, "not yet (2)") || !strings.Contains(devs[2].Prompt, "Review iteration 3") {
		t.Fatalf("iteration 3's prompt:\n%s", devs[2].Prompt)
	}
	if got := h.subjects(); !slices.Equal(got, []string{"gaffer: record of build-it", "phase 2: two", "phase 1: one", "initial"}) {
		t.Fatalf("commits %q", got)
	}
}

// neverApproved is a script whose reviewer rejects phase 1 every time.
const neverApproved = `
developer:
  - phase: 1
    actions:
      - write: {path: one.txt, content: "1\n"}
reviewer:
  - {phase: 1, approved: false, comments: "never"}
`

func TestTaskModeHaltsAfterMaxReviewIterations(t *testing.T) {
	h := newHarness(t, neverApproved)
	res, err := h.start(taskPlan, state.RunConfig{AutoApprove: true, Limits: state.Limits{MaxTaskReviewIterations: 3}})
	mustDone(t, res, err, state.RunHalted)
	if revs, _ := h.rec.of(agent.RoleReviewer); len(revs) != 3 {
		t.Fatalf("%d reviews, want 3", len(revs))
	}
	if got := h.git("status", "--porcelain"); got != "?? notes.txt" {
		t.Fatalf("tree:\n%s", got)
	}
}

// TestPhaseKeepsItsLastRejections: a phase rejected seven times keeps
// the last state.MaxRejections of those reviews, oldest first, each with
// its attempt and iteration.
func TestPhaseKeepsItsLastRejections(t *testing.T) {
	h := newHarness(t, neverApproved)
	res, err := h.start(taskPlan, state.RunConfig{AutoApprove: true, Limits: state.Limits{MaxTaskReviewIterations: 7}})
	s := mustDone(t, res, err, state.RunHalted)
	rs := s.Progress.Phases[0].Rejections
	if len(rs) != state.MaxRejections {
		t.Fatalf("%d rejections kept, want %d: %+v", len(rs), state.MaxRejections, rs)
	}
	for i, r := range rs {
		if r.Attempt != 1 || r.Iteration != 7-state.MaxRejections+1+i || r.Review.Approved || r.Review.Comments != "never" {
			t.Errorf("rejection %d: %+v, want attempt 1 iteration %d", i, r, 7-state.MaxRejections+1+i)
		}
	}
}

func TestRejectWithFeedbackReplans(t *testing.T) {
	h := newHarness(t, `
architect:
  - plan: "# Plan A\n\n### Task 1: the first idea\n"
  - plan: "# Plan B\n\n### Task 1: the revised task\n"
`)
	ctx := context.Background()
	res, err := h.start("", state.RunConfig{})
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v", res.Status, err)
	}
	res, err = h.runner.Resume(ctx, "r-1", graph.WithResume(Answer{Feedback: "do the revised task"}))
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("reject: %v %v", res.Status, err)
	}
	if !strings.Contains(res.State.Plan.Markdown, "revised task") || res.State.Progress.PlanRevision != 1 {
		t.Fatalf("plan after feedback (revision %d):\n%s", res.State.Progress.PlanRevision, res.State.Plan.Markdown)
	}
	archs, _ := h.rec.of(agent.RoleArchitect)
	if len(archs) != 2 || archs[1].Revision != 1 || !strings.Contains(archs[1].Prompt, "do the revised task") {
		t.Fatalf("architect sessions: %+v", archs)
	}
	res, err = h.runner.Resume(ctx, "r-1", graph.WithResume(Answer{Approved: true}))
	mustDone(t, res, err, state.RunCompleted)
	if got := h.subjects(); got[1] != "phase 1: the revised task" {
		t.Fatalf("commits %q", got)
	}
}

func TestRejectWithoutFeedbackEndsRejected(t *testing.T) {
	h := newHarness(t, "{}")
	if _, err := h.start(taskPlan, state.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	res, err := h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{}))
	mustDone(t, res, err, state.RunRejected)
	if got := h.subjects(); !slices.Equal(got, []string{"initial"}) {
		t.Fatalf("commits %q", got)
	}
}

func TestValidatorLoopFailsAfterMaxRevisions(t *testing.T) {
	h := newHarness(t, `
architect:
  - plan: "# Bad\n\n### Task 1: a\n- depends on: 7\n"
`)
	res, err := h.start("", state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunFailed)
	archs, _ := h.rec.of(agent.RoleArchitect)
	if len(archs) != 4 || archs[3].Revision != 3 {
		t.Fatalf("%d architect sessions (want revisions 0..3)", len(archs))
	}
	if !strings.Contains(archs[1].Prompt, "7") {
		t.Fatalf("revision 1's prompt lacks the problem:\n%s", archs[1].Prompt)
	}
	all := strings.Join(s.Errors, "\n")
	if !strings.Contains(all, "unknown") || !strings.Contains(all, "after 3 revisions") {
		t.Fatalf("errors do not list the problems: %q", s.Errors)
	}
}

func TestResumeAdoptsTheCommitMadeBeforeACrash(t *testing.T) {
	h := newHarness(t, retryScript)
	// The process "dies" after phase 1's commit, before its checkpoint.
	h.store.fail = func(cp checkpoint.Checkpoint) bool { return slices.Equal(cp.Ran, []string{NodeReview}) }
	if _, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true}); err == nil {
		t.Fatal("want the injected checkpoint failure")
	}
	if got := h.subjects(); got[0] != "phase 1: write the test" {
		t.Fatalf("commits before resume %q", got)
	}
	res, err := h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
	want := []string{"gaffer: record of build-it", "phase 2: implement", "phase 1: write the test", "initial"}
	if got := h.subjects(); !slices.Equal(got, want) {
		t.Fatalf("commits %q, want %q (phase 1 committed twice?)", got, want)
	}
	if revs, _ := h.rec.of(agent.RoleReviewer); len(revs) != 3 {
		t.Fatalf("%d reviews, want 3: the adopted phase is not reviewed again", len(revs))
	}
}

func TestResumeAfterCrashMidAgentResetsFirst(t *testing.T) {
	h := newHarness(t, retryScript)
	h.store.fail = func(cp checkpoint.Checkpoint) bool {
		return slices.Equal(cp.Ran, []string{NodePhase}) && len(cp.Next) == 1 && cp.Step > 6
	}
	if _, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true}); err == nil {
		t.Fatal("want the injected checkpoint failure")
	}
	// Leave a stray file as a half-done agent would.
	writeFile(t, h.dir, "stray.txt", "half\n")
	res, err := h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
	if _, err := os.Stat(filepath.Join(h.dir, "stray.txt")); !os.IsNotExist(err) {
		t.Fatal("the crashed attempt's stray file survived")
	}
	if _, err := exec.LookPath("git"); err == nil {
		if out := h.git("log", "--all", "--format=%h", "--", "stray.txt"); out != "" {
			t.Fatalf("stray.txt committed: %s", out)
		}
	}
}

func TestEventsAndUsage(t *testing.T) {
	h := newHarness(t, retryScript+`
    usage: {input_tokens: 100, output_tokens: 10, cost_usd: 0.5}
`)
	counts := map[string]int{}
	var outcomes []string
	unsub := h.runner.Subscribe(func(e graph.Event) {
		if e.Kind != graph.Custom {
			return
		}
		counts[e.Name]++
		if pf, ok := e.Payload.(events.PhaseFinished); ok {
			outcomes = append(outcomes, fmt.Sprintf("%d/%d:%s", pf.Phase, pf.Attempt, pf.Outcome))
		}
	})
	defer unsub()
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	if u := s.Usage["reviewer"]; u.InputTokens != 100 || u.CostUSD != 0.5 {
		t.Fatalf("reviewer usage %+v", u)
	}
	// 3 developer + 3 reviewer sessions; 3 reviews; 3 phase attempts; one status change.
	if counts[events.EventAgentUsage] != 6 || counts[events.EventReview] != 3 || counts[events.EventPhaseFinished] != 3 || counts[events.EventRunStatus] != 1 {
		t.Fatalf("events %v", counts)
	}
	if want := []string{"1/1:completed", "2/1:retried", "2/2:completed"}; !slices.Equal(outcomes, want) {
		t.Fatalf("phase outcomes %q, want %q", outcomes, want)
	}
}

func TestEvaluatorSortsTheReviewItems(t *testing.T) {
	h := newHarness(t, retryScript+`
evaluator:
  - phase: 2
    items:
      - {text: write v2, disposition: IMPLEMENT}
      - {text: rename everything, disposition: REJECT, reason: the names are fine}
`)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	if evs, _ := h.rec.of(agent.RoleEvaluator); len(evs) != 1 || !strings.Contains(evs[0].Prompt, "rename everything") {
		t.Fatalf("evaluator sessions: %+v", evs)
	}
	fb := h.git("show", "HEAD:"+s.Run.ExecDir+"/phase-2/review-feedback.md")
	fix, rest, _ := strings.Cut(fb, "Rejected (do not act on it):")
	if !strings.Contains(fix, "write v2") || !strings.Contains(rest, "rename everything (the names are fine)") {
		t.Fatalf("review-feedback.md does not follow the evaluator:\n%s", fb)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if p := devs[2].Prompt; !strings.Contains(p, "To fix now:\n- write v2") {
		t.Fatalf("retry prompt:\n%s", p)
	}
}

func TestLeftoverTempFilesInTheExecDirAreRemoved(t *testing.T) {
	h := newHarness(t, retryScript)
	h.store.fail = func(cp checkpoint.Checkpoint) bool { return slices.Equal(cp.Ran, []string{NodeNextTask}) }
	if _, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true}); err == nil {
		t.Fatal("want the injected crash")
	}
	snap, err := h.runner.State(context.Background(), "r-1")
	if err != nil {
		t.Fatal(err)
	}
	// A process killed inside WriteFileAtomic leaves such a file behind.
	tmp := filepath.Join(h.dir, filepath.FromSlash(snap.State.Run.ExecDir), "phase-1", ".summary.md"+atomicfile.TempMarker+"x1")
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(tmp), filepath.Base(tmp), "half")
	res, err := h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
	if got := h.git("status", "--porcelain", "--untracked-files=all"); got != "?? notes.txt" {
		t.Fatalf("git status:\n%s", got)
	}
}

func TestRetryPromptCarriesOnlyTheItemsToFix(t *testing.T) {
	h := newHarness(t, retryScript)
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	mustDone(t, res, err, state.RunCompleted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if p := devs[2].Prompt; !strings.Contains(p, "write v2") || strings.Contains(p, "rename everything") {
		t.Fatalf("retry prompt should keep the IMPLEMENT item and drop the DEFER one:\n%s", p)
	}
}
