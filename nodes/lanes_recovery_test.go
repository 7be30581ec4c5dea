package nodes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// threeLanePlan is one phase of three tasks with disjoint files: lanes
// a (task 1), b (task 2) and c (task 3).
const threeLanePlan = `# Plan: three lanes

### Task 1: aye
- type: test
- depends on: none
- files: a.txt

### Task 2: bee
- type: test
- depends on: none
- files: b.txt

### Task 3: sea
- type: test
- depends on: none
- files: c.txt
`

// laneBFailsTwice: lanes a and c succeed at once; lane b fails its
// first two attempts (the phase's two) and succeeds on its third, which
// only recovery grants. The Doctor advises a retry.
const laneBFailsTwice = `developer:
  - phase: 1
    task: "1"
    actions:
      - write: {path: a.txt, content: "a\n"}
  - phase: 1
    task: "2"
    attempt: 1
    actions:
      - run: 'echo "b.txt: the bee fixture is missing" >&2; exit 1'
  - phase: 1
    task: "2"
    attempt: 2
    actions:
      - run: 'echo "b.txt: the bee fixture is missing" >&2; exit 1'
  - phase: 1
    task: "2"
    actions:
      - run: "test ! -e a.txt && test ! -e c.txt"
      - write: {path: b.txt, content: "b\n"}
  - phase: 1
    task: "3"
    actions:
      - write: {path: c.txt, content: "c\n"}
doctor:
  - answer: '{"action":"retry_with_hint","confidence":0.9,"category":"test_failure","rationale":"the fixture needs making first","hint":"make the bee fixture"}'
`

// laneRecoveryConfig is recovery on, two attempts a phase, lanes one at
// a time (the order of the sessions is the lanes').
func laneRecoveryConfig() state.RunConfig {
	cfg := on()
	cfg.Parallel = 1
	cfg.Limits.MaxPhaseAttempts = 2
	return cfg
}

// sessionsByTask counts the developer sessions of each task's lane.
func sessionsByTask(h *harness) map[string]int {
	devs, _ := h.rec.of(agent.RoleDeveloper)
	n := map[string]int{}
	for _, d := range devs {
		n[strings.Join(d.Tasks, "+")]++
	}
	return n
}

// checkLaneRetry checks a run of laneBFailsTwice that ended: only lane
// b ran again (three sessions; a and c one each), the phase is one
// commit holding every lane's work, and a and c kept their first
// attempt.
func checkLaneRetry(t *testing.T, h *harness, s state.ExecutionState) {
	t.Helper()
	if n := sessionsByTask(h); n["1"] != 1 || n["3"] != 1 || n["2"] < 3 {
		t.Fatalf("developer sessions by task %v, want 1: 1, 2: 3, 3: 1 (only the failed lane again)", n)
	}
	if got := h.subjects(); !slices.Equal(got, []string{"gaffer: record of build-it", "phase 1: aye; bee; sea", "initial"}) {
		t.Fatalf("commits %q", got)
	}
	for _, f := range []string{"a", "b", "c"} {
		if got := h.git("show", "HEAD~1:"+f+".txt"); got != f {
			t.Fatalf("%s.txt in the phase's commit = %q", f, got)
		}
	}
	ps := s.Progress.Phases[0]
	if ps.Attempt != 3 || len(ps.Lanes) != 3 {
		t.Fatalf("phase %+v", ps)
	}
	if a, b, c := ps.Lanes[0], ps.Lanes[1], ps.Lanes[2]; a.Attempt != 1 || c.Attempt != 1 || b.Attempt != 3 || b.Status != state.LaneDone {
		t.Fatalf("lanes a %+v\nb %+v\nc %+v", a, b, c)
	}
}

// TestRecoveryRetriesOnlyTheFailedLane: a phase of three lanes whose
// lane b fails both of the phase's attempts gets one more from the
// Doctor; only b's session runs again, fresh, and a's and c's work of
// the first attempt goes into the phase's one commit. The Doctor is
// asked about lane b (its task and its error), and the decision record
// names the lane.
func TestRecoveryRetriesOnlyTheFailedLane(t *testing.T) {
	t.Parallel()
	h := newHarness(t, laneBFailsTwice)
	res, err := h.start(threeLanePlan, laneRecoveryConfig())
	s := mustDone(t, res, err, state.RunCompleted)
	checkLaneRetry(t, h, s)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	last := devs[len(devs)-1]
	if !slices.Equal(last.Tasks, []string{"2"}) || last.SessionID != "" || last.Attempt != 3 {
		t.Fatalf("the granted attempt's session: tasks %v, attempt %d, continues %q; want lane b's, attempt 3, fresh", last.Tasks, last.Attempt, last.SessionID)
	}
	for _, want := range []string{"make the bee fixture", "Retry attempt 3 of your lane", "other lanes succeeded and keep their work"} {
		if !strings.Contains(last.Prompt, want) {
			t.Errorf("the granted attempt's prompt lacks %q:\n%s", want, last.Prompt)
		}
	}
	if strings.Contains(last.Prompt, "earlier work is in this tree") {
		t.Errorf("the granted attempt's prompt says its fresh tree holds its earlier work:\n%s", last.Prompt)
	}
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) == 0 {
		t.Fatal("the Doctor was not asked")
	}
	p := docs[len(docs)-1].Prompt
	for _, want := range []string{"Lane 2 (task 2: bee)", "the bee fixture is missing"} {
		if !strings.Contains(p, want) {
			t.Errorf("the Doctor's prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "Task 1: aye") || strings.Contains(p, "### Task 3") {
		t.Errorf("the Doctor's prompt is about the lanes that succeeded too:\n%s", p)
	}
	rs := recoveryOf(t, s)
	if rs.Last == nil || rs.Last.Lane != "2" {
		t.Fatalf("the last decision %+v does not name lane 2", rs.Last)
	}
	var rec DecisionRecord
	b, err := os.ReadFile(filepath.Join(h.dir, decisionPath(s, rs.Decisions)))
	if err != nil {
		// the record commit took it
		b = []byte(h.git("show", "HEAD:"+decisionPath(s, rs.Decisions)))
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Lane != "2" || !strings.HasPrefix(rec.Decision, "doctor:") {
		t.Fatalf("decision record %s (%v): want the Doctor's, naming lane 2", b, err)
	}
}

// TestRecoveryLaneRetrySurvivesACrashAtEveryCheckpoint loses in turn
// the checkpoint of each step after which a's and c's success waits
// for b's retry — the first lanes' step (a and c succeed, b fails), the
// review that finds the phase's attempts used, the recover step that
// grants one more, the dispatch of b alone and b's lane step — and
// resumes: a and c never run again, and the phase's commit is the one
// of the run that never crashed. (The steps between, a retry within
// max_phase_attempts, are TestCrashAtEveryCheckpoint's kind.)
func TestRecoveryLaneRetrySurvivesACrashAtEveryCheckpoint(t *testing.T) {
	t.Parallel()
	ref := newHarness(t, laneBFailsTwice)
	var ran [][]string // each checkpoint's nodes, in order
	ref.store.fail = func(cp checkpoint.Checkpoint) bool { ran = append(ran, cp.Ran); return false }
	res, err := ref.start(threeLanePlan, laneRecoveryConfig())
	mustDone(t, res, err, state.RunCompleted)
	wantTree := ref.git("rev-parse", "HEAD~1^{tree}")
	var kills []int64 // 1-based, as the fault store counts
	if k := slices.IndexFunc(ran, func(r []string) bool { return slices.Contains(r, NodeLane) }); k >= 0 {
		kills = append(kills, int64(k+1))
	}
	if k := slices.IndexFunc(ran, func(r []string) bool { return slices.Contains(r, NodeRecover) }); k > 0 && k+2 < len(ran) {
		kills = append(kills, int64(k), int64(k+1), int64(k+2), int64(k+3)) // review, recover, dispatch, lane
	}
	if len(kills) != 5 || !slices.Contains(ran[kills[4]-1], NodeLane) {
		t.Fatalf("the run's steps %v: not the steps to die after (%v)", ran, kills)
	}
	ctx := context.Background()
	for _, k := range kills {
		h := newHarness(t, laneBFailsTwice)
		h.failAt(k)
		res, err := h.start(threeLanePlan, laneRecoveryConfig())
		for i := 0; err != nil; i++ {
			if i > 5 || !strings.Contains(err.Error(), errCrash.Error()) {
				t.Fatalf("checkpoint %d lost: %v", k, err)
			}
			res, err = h.runner.Resume(ctx, "r-1")
		}
		if res.Status != graph.Done {
			t.Fatalf("checkpoint %d lost: the run stopped %v", k, res.Status)
		}
		s := mustDone(t, res, err, state.RunCompleted)
		checkLaneRetry(t, h, s)
		if got := h.git("rev-parse", "HEAD~1^{tree}"); got != wantTree {
			t.Fatalf("checkpoint %d lost: the phase's tree %s, want %s", k, got, wantTree)
		}
	}
	t.Logf("lost each of checkpoints %v in turn", kills)
}

// TestRecoveryAsksTheHumanAboutTheFailedLane: the Doctor wants a human
// for lane b; the question names the lane, and the human's retry runs
// only b again, as the Doctor's does.
func TestRecoveryAsksTheHumanAboutTheFailedLane(t *testing.T) {
	t.Parallel()
	script := strings.Replace(laneBFailsTwice, `{"action":"retry_with_hint"`, `{"action":"needs_human"`, 1)
	h := newHarness(t, script)
	res, err := h.start(threeLanePlan, laneRecoveryConfig())
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	q, ok := PendingQuestion(res.State)
	if !ok || q.Decision != "needs_human" || q.Lane != "2" || q.Attempt != 2 {
		t.Fatalf("question %+v, want needs_human about lane 2 after attempt 2", q)
	}
	res, err = h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true, Feedback: "make the fixture first"}))
	s := mustDone(t, res, err, state.RunCompleted)
	checkLaneRetry(t, h, s)
	if rs := recoveryOf(t, s); rs.Last == nil || rs.Last.Decision != "human:retry" || rs.Last.Lane != "2" {
		t.Fatalf("the last decision %+v, want the human's retry naming lane 2", rs.Last)
	}
}
