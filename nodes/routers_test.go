package nodes

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// plannedState is a state with a parsed plan of n phases, at phase cur.
func plannedState(t *testing.T, md string, cur int) state.ExecutionState {
	t.Helper()
	plan, err := state.ParsePlan("plan.md", md)
	if err != nil {
		t.Fatal(err)
	}
	s, err := state.NewRun(state.RunInfo{ID: "r-1", Goal: "g", CreatedAt: fixedTime}, state.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithPlan(plan)
	for i := range cur {
		s.Progress.Phases[i].Attempt, s.Progress.Phases[i].Status = 1, state.PhaseCompleted
	}
	s.Progress.Phases[cur].Attempt = 1
	return s
}

func phasedPlan(n int) string {
	var b strings.Builder
	b.WriteString("# Plan\n\nGoal: things.\n\n")
	for i := 1; i <= n; i++ {
		dep := "none"
		if i > 1 {
			dep = string(rune('0'+i-1)) + ""
		}
		typ := "test"
		if i%2 == 0 {
			typ = "impl"
		}
		b.WriteString("### Task " + string(rune('0'+i)) + ": step " + string(rune('0'+i)) + "\n- type: " + typ + "\n- depends on: " + dep + "\n\nDo step.\n\n")
	}
	return b.String()
}

const taskPlan = "# Plan\n\n### Task 1: one\n\nDo one.\n\n### Task 2: two\n\nDo two.\n"

func TestDecideAfterReview(t *testing.T) {
	tests := []struct {
		name      string
		md        string
		cur       int
		attempt   int
		iteration int // reviews before this one
		approved  bool
		want      Decision
		route     string // RouteAfterReview once the review node applied the decision
	}{
		{"approved, more phases", phasedPlan(3), 0, 1, 0, true, DecideNextPhase, NodeNextTask},
		{"approved, last phase", phasedPlan(3), 2, 1, 0, true, DecideDone, graph.END},
		{"phased rejected under the limit", phasedPlan(3), 1, 1, 0, false, DecideRetry, NodePhase},
		{"phased rejected at the limit", phasedPlan(3), 1, 2, 0, false, DecideHalt, graph.END},
		{"task rejected under the limit", taskPlan, 0, 1, 3, false, DecideIterate, NodePhase},
		{"task rejected at the limit", taskPlan, 0, 1, 4, false, DecideHalt, graph.END},
		{"task approved last", taskPlan, 1, 1, 2, true, DecideDone, graph.END},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := plannedState(t, tt.md, tt.cur)
			s.Progress.Phases[tt.cur].Attempt = tt.attempt
			s.Progress.Phases[tt.cur].Lanes = []state.LaneProgress{{Tasks: s.Plan.Phases[tt.cur].TaskIDs, Attempt: tt.attempt, Iteration: tt.iteration}}
			got := DecideAfterReview(s, tt.approved)
			if got != tt.want {
				t.Fatalf("DecideAfterReview = %v, want %v", got, tt.want)
			}
			// What the review node leaves behind, in the terms the router reads.
			ps := s.Progress.Phases[tt.cur]
			switch got {
			case DecideDone:
				ps.Status, s.Status = state.PhaseCompleted, state.RunCompleted
			case DecideNextPhase:
				ps.Status = state.PhaseCompleted
			case DecideHalt:
				ps.Status, s.Status = state.PhaseFailed, state.RunHalted
			default:
				ps.Status = state.PhaseRetrying
			}
			s.Progress.Phases[tt.cur] = ps
			if r := RouteAfterReview(s); r != tt.route {
				t.Fatalf("RouteAfterReview = %q, want %q", r, tt.route)
			}
		})
	}
}

func TestRoutersSendTerminalRunsToEnd(t *testing.T) {
	s := plannedState(t, phasedPlan(2), 0).WithStatus(state.RunCancelled)
	for name, r := range map[string]func(state.ExecutionState) string{
		"start": RouteStart, "architect": RouteAfterArchitect, "validator": RouteAfterValidator,
		"approval": RouteAfterApproval, "phase": RouteAfterPhase, "review": RouteAfterReview, "next": RouteAfterNextTask,
	} {
		if got := r(s); got != graph.END {
			t.Errorf("%s router: %q, want END", name, got)
		}
	}
}

func TestRouteStartAndValidator(t *testing.T) {
	var s state.ExecutionState
	if got := RouteStart(s); got != NodeArchitect {
		t.Errorf("no plan: %q", got)
	}
	s.Plan.Markdown = taskPlan
	if got := RouteStart(s); got != NodeValidator {
		t.Errorf("plan given: %q", got)
	}
	if got := RouteAfterValidator(s); got != NodeArchitect {
		t.Errorf("unparsed plan: %q", got)
	}
	s = plannedState(t, taskPlan, 0)
	if got := RouteAfterValidator(s); got != NodeApproval {
		t.Errorf("valid plan: %q", got)
	}
	for dec, want := range map[state.Decision]string{state.DecisionApproved: NodePhase, state.DecisionRejected: NodeArchitect, state.DecisionNone: graph.END} {
		s.Approval.Decision = dec
		if got := RouteAfterApproval(s); got != want {
			t.Errorf("approval %v: %q, want %q", dec, got, want)
		}
	}
}

func TestPhasePromptStablePrefixAndSize(t *testing.T) {
	// The same phase content at position 1 and position 9 of a plan:
	// the prompt must not grow with the phases before it.
	md := phasedPlan(9)
	first := plannedState(t, md, 0)
	last := plannedState(t, md, 8)
	p1, err := PhasePrompt(first)
	if err != nil {
		t.Fatal(err)
	}
	p9, err := PhasePrompt(last)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{p1, p9} {
		if !strings.HasPrefix(p, PhasePrefix) {
			t.Fatalf("prompt does not start with the stable prefix:\n%s", p)
		}
	}
	// Phase 9 adds one line pointing at the summaries (a path, not their
	// content) and the git hint; allow that fixed overhead only.
	if d := len(p9) - len(p1); d > 300 {
		t.Fatalf("phase 9's prompt is %d bytes longer than phase 1's:\n%s", d, p9)
	}
	if strings.Contains(p9, "step 1\n") || strings.Contains(p9, "Task 8:") {
		t.Fatalf("phase 9's prompt holds earlier phases' tasks:\n%s", p9)
	}
	if !strings.HasSuffix(strings.TrimSpace(p9), "in this order. Do not commit; report what you did.") ||
		!strings.Contains(p9[strings.LastIndex(p9, "## Your assignment"):], "Task 9 (step 9)") {
		t.Fatalf("the assignment is not restated at the end:\n%s", p9)
	}
}

func TestRetryContextKeepsErrorsAndVariesFraming(t *testing.T) {
	s := plannedState(t, phasedPlan(2), 1)
	long := strings.Repeat("FAIL: TestX expected 3 got 4\n", 50)
	ps := s.Progress.Phases[1]
	ps.Review = &state.ReviewResult{Comments: "The developer agent reported failure:\n\n" + long}
	ps.Attempt = 2
	s.Progress.Phases[1] = ps
	p2, _ := PhasePrompt(s)
	ps.Attempt = 3
	s.Progress.Phases[1] = ps
	p3, _ := PhasePrompt(s)
	if !strings.Contains(p2, long) || !strings.Contains(p3, long) {
		t.Fatal("the previous errors are not kept in full")
	}
	if !strings.Contains(p2, "phase-2/review-feedback.md") {
		t.Fatalf("no pointer to review-feedback.md:\n%s", p2)
	}
	if !strings.Contains(p2, retryFraming(0)) || !strings.Contains(p3, retryFraming(1)) {
		t.Fatal("the retry framing does not vary with the attempt")
	}
}

func TestArchitectPromptCarriesProblemsAndFeedback(t *testing.T) {
	s, _ := state.NewRun(state.RunInfo{ID: "r", Goal: "build calc", CreatedAt: fixedTime}, state.RunConfig{})
	s.Plan.Markdown = "### Task 1: a\n- depends on: 9\n"
	s.Progress.PlanRevision = 1
	p := ArchitectPrompt(s)
	if !strings.Contains(p, "Revision 1") || !strings.Contains(p, "9") {
		t.Fatalf("problems missing:\n%s", p)
	}
	if !strings.Contains(p, "disjoint files") || !strings.Contains(p, `"- files:"`) {
		t.Fatalf("the prompt does not ask for disjoint files:\n%s", p)
	}
	s = plannedState(t, taskPlan, 0)
	s.Approval = state.Approval{Decision: state.DecisionRejected, Feedback: "split task 2"}
	if p := ArchitectPrompt(s); !strings.Contains(p, "split task 2") {
		t.Fatalf("feedback missing:\n%s", p)
	}
}
