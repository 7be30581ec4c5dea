package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// disjointPlan is a plan of one phase with a task per name (Task 1, 2,
// …) that declares its own file, name.txt: a lane each.
func disjointPlan(names ...string) string {
	var b strings.Builder
	b.WriteString("# Plan\n")
	for i, n := range names {
		fmt.Fprintf(&b, "\n### Task %d: %s\n- type: test\n- depends on: none\n- files: %s.txt\n", i+1, n, n)
	}
	return b.String()
}

// twoMisspeltScript runs the lanes of disjointPlan("one", "two"): the
// reviewer rejects the first attempt naming task 2, whose second
// attempt mends two.txt.
const twoMisspeltScript = `
developer:
  - phase: 1
    task: "1"
    actions:
      - write: {path: one.txt, content: "1\n"}
  - phase: 1
    task: "2"
    attempt: 1
    actions:
      - write: {path: two.txt, content: "too\n"}
  - phase: 1
    task: "2"
    attempt: 2
    actions:
      - write: {path: two.txt, content: "2\n"}
reviewer:
  - phase: 1
    attempt: 1
    approved: false
    comments: two.txt is misspelt
    tasks: ["2"]
`

// lanePlan's first phase has three tasks with disjoint files (three
// lanes), its second one task.
const lanePlan = `# Plan: greetings

### Task 1: hello
- type: test
- depends on: none
- files: hello.txt

### Task 2: bye
- type: test
- depends on: none
- files: bye.txt

### Task 3: both
- type: test
- depends on: none
- files: both.txt

### Task 4: all
- type: impl
- depends on: 1, 2, 3
- files: all.txt
`

const laneScript = `developer:
  - phase: 1
    task: "1"
    summary: hello
    usage: {input_tokens: 10, cost_usd: 0.25}
    decisions: [{topic: hello, what: say hello}]
    actions:
      - write: {path: hello.txt, content: "hello\n"}
  - phase: 1
    task: "2"
    summary: bye
    usage: {input_tokens: 5, cost_usd: 0.5}
    decisions: [{topic: bye, what: say bye}]
    actions:
      - write: {path: bye.txt, content: "bye\n"}
  - phase: 1
    task: "3"
    summary: both
    actions:
      - run: "test ! -e hello.txt && test ! -e bye.txt"
      - write: {path: both.txt, content: "both\n"}
  - phase: 2
    actions:
      - run: "cat hello.txt bye.txt both.txt > all.txt"
`

// TestLanesRunInTheirOwnTreesAndCommitAsOne: a phase of three lanes runs
// three developer sessions, each in its own tree from the phase's base
// (lane 3 sees neither of the others' files), each with its own session
// id; their work is the phase's one commit, and the next phase of one
// lane sees it all. The lanes' decision records are numbered in lane
// order, their refs and trees are gone once the phase is committed.
func TestLanesRunInTheirOwnTreesAndCommitAsOne(t *testing.T) {
	h := newHarness(t, laneScript)
	res, err := h.start(lanePlan, state.RunConfig{AutoApprove: true, Parallel: 2})
	s := mustDone(t, res, err, state.RunCompleted)
	if got := h.subjects(); !slices.Equal(got, []string{"gaffer: record of build-it", "phase 2: all", "phase 1: hello; bye; both", "initial"}) {
		t.Fatalf("commits %q", got)
	}
	if got := h.git("show", "HEAD~1:all.txt"); got != "hello\nbye\nboth" {
		t.Fatalf("all.txt = %q", got)
	}
	devs, ids := h.rec.of(agent.RoleDeveloper)
	if len(devs) != 4 {
		t.Fatalf("%d developer sessions, want 4", len(devs))
	}
	dirs := map[string]bool{}
	lanes := map[int]bool{}
	for i, d := range devs[:3] {
		dirs[d.Dir] = true
		lanes[d.Lane] = true
		if d.Dir == h.dir || !strings.Contains(d.Dir, workspace.LaneTreesDir) {
			t.Errorf("lane session %d ran in %s, not a lane tree", i, d.Dir)
		}
		if !strings.Contains(ids[i], "-l") {
			t.Errorf("lane session %d has session id %q, not its lane's", i, ids[i])
		}
	}
	if len(dirs) != 3 || len(lanes) != 3 || devs[3].Dir != h.dir || devs[3].Lane != 0 {
		t.Fatalf("sessions %+v", devs)
	}
	ps := s.Progress.Phases[0]
	if len(ps.Lanes) != 3 {
		t.Fatalf("phase 1 has %d lanes", len(ps.Lanes))
	}
	for k, l := range ps.Lanes {
		if l.Status != state.LaneDone || l.Head == "" || l.SessionID == "" || l.Attempt != 1 || l.Record != nil {
			t.Errorf("lane %d = %+v", k+1, l)
		}
	}
	if refs := h.git("for-each-ref", workspace.LaneRefPrefix); refs != "" {
		t.Errorf("lane refs left: %s", refs)
	}
	if left, _ := os.ReadDir(filepath.Join(h.repo.LaneTrees(), "r-1")); len(left) != 0 {
		t.Errorf("lane trees left: %v", left)
	}
	// The records, in lane order: hello (lane 1) then bye (lane 2).
	recs := h.git("show", "HEAD~2", "--name-only", "--format=")
	i1, i2 := strings.Index(recs, "001-developer-p1-a1.json"), strings.Index(recs, "002-developer-p1-a1.json")
	if i1 < 0 || i2 < 0 {
		t.Fatalf("phase 1's commit lacks the lanes' records:\n%s", recs)
	}
	b := h.git("show", "HEAD~2:"+s.Run.ExecDir+"/story/001-developer-p1-a1.json")
	if !strings.Contains(b, "say hello") {
		t.Errorf("record 1 is not lane 1's:\n%s", b)
	}
	want := state.Usage{InputTokens: 15, CostUSD: 0.75}
	if got := s.Usage["developer"]; got != want {
		t.Errorf("the run's developer usage %+v, want the lanes' %+v", got, want)
	}
	if got := ps.LaneUsage(); got != want || ps.Lanes[0].Usage.InputTokens != 10 {
		t.Errorf("the lanes' usage %+v (lane 1 %+v), want %+v", got, ps.Lanes[0].Usage, want)
	}
}

// TestLaneConflictRunsTheLaneAgainOnTheOthersWork: two lanes that both
// change a file neither declared conflict; the later one runs again,
// alone, on the other's work, with the conflict in its prompt (its
// attempt one higher, the phase's not), and both changes are committed.
func TestLaneConflictRunsTheLaneAgainOnTheOthersWork(t *testing.T) {
	h := newHarness(t, `developer:
  - phase: 1
    task: "1"
    actions:
      - write: {path: one.txt, content: "1\n"}
      - write: {path: README.md, content: "# test\none\n"}
  - phase: 1
    task: "2"
    attempt: 1
    actions:
      - write: {path: two.txt, content: "2\n"}
      - write: {path: README.md, content: "# test\ntwo\n"}
  - phase: 1
    task: "2"
    attempt: 2
    actions:
      - run: "test -e one.txt"
      - edit: {path: README.md, old: "one\n", new: "one\ntwo\n"}
      - write: {path: two.txt, content: "2\n"}
`)
	res, err := h.start(disjointPlan("one", "two"), state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	if got := h.git("show", "HEAD~1:README.md"); got != "# test\none\ntwo" {
		t.Fatalf("README.md = %q", got)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		h.git("cat-file", "-e", "HEAD~1:"+f)
	}
	ps := s.Progress.Phases[0]
	if ps.Attempt != 1 || ps.Lanes[0].Attempt != 1 || ps.Lanes[1].Attempt != 2 || !slices.Equal(ps.Lanes[1].Conflict, []string{"README.md"}) {
		t.Fatalf("phase %+v", ps)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	last := devs[len(devs)-1]
	if len(devs) != 3 || last.Attempt != 2 || !strings.Contains(last.Prompt, "conflicted") || !strings.Contains(last.Prompt, "`README.md`") {
		t.Fatalf("sessions: %d, the last %+v", len(devs), last)
	}
}

// TestReviewNamesTheTasksAtFault: a review that rejects a phase of two
// lanes naming one task runs only that task's lane again; the other
// keeps its work.
func TestReviewNamesTheTasksAtFault(t *testing.T) {
	h := newHarness(t, twoMisspeltScript)
	res, err := h.start(disjointPlan("one", "two"), state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if len(devs) != 3 || !slices.Equal(devs[2].Tasks, []string{"2"}) {
		t.Fatalf("developer sessions: %d, the last on %v", len(devs), devs[len(devs)-1].Tasks)
	}
	if got := h.git("show", "HEAD~1:two.txt"); got != "2" {
		t.Fatalf("two.txt = %q", got)
	}
	ps := s.Progress.Phases[0]
	if ps.Attempt != 2 || ps.Lanes[0].Attempt != 1 || ps.Lanes[1].Attempt != 2 {
		t.Fatalf("attempts: phase %d, lanes %d and %d", ps.Attempt, ps.Lanes[0].Attempt, ps.Lanes[1].Attempt)
	}
	revs, _ := h.rec.of(agent.RoleReviewer)
	if !strings.Contains(revs[0].Prompt, `"tasks"`) {
		t.Error("the reviewer of a phase of lanes is not asked for the tasks at fault")
	}
}

// TestLaneRetryOnABaseHoldingItsFiles: a rejected lane's retry writes
// what the base already holds (a run of the same plan merged before), so
// the combined work of attempt 2 is no change to that file at all. The
// retry starts from the pre-phase commit: the first attempt's combined
// work in the run's tree goes (it is the run's own, so no rescue), and
// the phase commits as the review approved it, not stopped as "changed
// outside the agent's session".
func TestLaneRetryOnABaseHoldingItsFiles(t *testing.T) {
	h := newHarness(t, twoMisspeltScript)
	writeFile(t, h.dir, "two.txt", "2\n")
	h.commitAs("two, merged from an earlier run", "two.txt")
	res, err := h.start(disjointPlan("one", "two"), state.RunConfig{AutoApprove: true})
	mustDone(t, res, err, state.RunCompleted)
	if got := h.git("show", "HEAD~1:two.txt"); got != "2" {
		t.Fatalf("two.txt = %q", got)
	}
	if got := h.git("show", "HEAD~1:one.txt"); got != "1" {
		t.Fatalf("one.txt = %q", got)
	}
	if refs := h.git("for-each-ref", "refs/gaffer/rescue/"); refs != "" {
		t.Fatalf("the retry kept the run's own work as if it were someone else's: %s", refs)
	}
	if st := h.git("status", "--porcelain", "--", "one.txt", "two.txt"); st != "" {
		t.Fatalf("tree after the run:\n%s", st)
	}
}

// TestLaneCrashResumesOnlyUnfinishedLanes: a run whose fan-out step dies
// after two of three lanes finished (their pending writes saved) runs
// only the third again on resume.
func TestLaneCrashResumesOnlyUnfinishedLanes(t *testing.T) {
	h := newHarness(t, laneScript)
	h.store.fail = func(cp checkpoint.Checkpoint) bool { return slices.Contains(cp.Ran, NodeLane) }
	res, err := h.start(lanePlan, state.RunConfig{AutoApprove: true})
	if err == nil {
		t.Fatalf("the run went on past the lost checkpoint: %+v", res.Status)
	}
	before, _ := h.rec.of(agent.RoleDeveloper)
	if len(before) != 3 {
		t.Fatalf("%d developer sessions before the crash, want 3", len(before))
	}
	res, err = h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
	after, _ := h.rec.of(agent.RoleDeveloper)
	if len(after) != 4 { // phase 2's only: the three lanes' pending writes were saved
		t.Fatalf("%d developer sessions in all, want 4 (no lane again)", len(after))
	}
}

// inFlight counts a driver's sessions at once, and the most there were.
type inFlight struct {
	inner agent.Driver
	mu    sync.Mutex
	now   int
	most  int
}

func (d *inFlight) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	d.mu.Lock()
	d.now++
	d.most = max(d.most, d.now)
	d.mu.Unlock()
	defer func() { d.mu.Lock(); d.now--; d.mu.Unlock() }()
	return d.inner.Run(ctx, s)
}

// TestParallelBoundsTheLanesAtOnce: a phase of three lanes whose sessions
// take a while runs them all at once with parallel 3, and one after
// another, each a fresh session of its own, with parallel 1; a workflow
// capped at two sessions (serve --max-sessions 2) runs two at once
// whatever the run's parallel.
func TestParallelBoundsTheLanesAtOnce(t *testing.T) {
	script := strings.ReplaceAll(laneScript, "    actions:\n      - write: {path: hello.txt", "    actions:\n      - wait: 300ms\n      - write: {path: hello.txt")
	script = strings.ReplaceAll(script, "    actions:\n      - write: {path: bye.txt", "    actions:\n      - wait: 300ms\n      - write: {path: bye.txt")
	script = strings.ReplaceAll(script, "      - run: \"test ! -e hello.txt && test ! -e bye.txt\"", "      - wait: 300ms\n      - run: \"test ! -e hello.txt && test ! -e bye.txt\"")
	for _, c := range []struct{ parallel, maxSessions, most int }{{3, 0, 3}, {1, 0, 1}, {3, 2, 2}} {
		h := newHarness(t, script)
		counted := &inFlight{inner: h.rec}
		g, err := Build(Config{Repo: h.repo, Clock: func() time.Time { return fixedTime }, Drivers: func(agent.Role, state.RunConfig) (agent.Driver, error) {
			return counted, nil
		}, MaxSessions: c.maxSessions})
		if err != nil {
			t.Fatal(err)
		}
		if h.runner, err = g.Compile(graph.WithStore(h.store), graph.WithCodec(NewCodec()), graph.WithMerge(Merge)); err != nil {
			t.Fatal(err)
		}
		res, err := h.start(lanePlan, state.RunConfig{AutoApprove: true, Parallel: c.parallel})
		s := mustDone(t, res, err, state.RunCompleted)
		if counted.most != c.most {
			t.Errorf("parallel %d, max sessions %d: %d sessions at most at once, want %d", c.parallel, c.maxSessions, counted.most, c.most)
		}
		ids := map[string]bool{}
		for _, l := range s.Progress.Phases[0].Lanes {
			ids[l.SessionID] = true
		}
		if len(ids) != 3 {
			t.Errorf("parallel %d: the lanes' sessions %v, want three of their own", c.parallel, ids)
		}
	}
}

// TestLaneEventsNameTheirLane: each lane's developer session is framed
// by lane_started and lane_finished naming its phase, lane and task ids,
// and its agent_usage names them too; the phase of one lane emits no
// lane events and its usage names no lane.
func TestLaneEventsNameTheirLane(t *testing.T) {
	h := newHarness(t, laneScript)
	var mu sync.Mutex
	var started, finished []events.LaneSession
	var usage []events.AgentUsage
	unsub := h.runner.Subscribe(func(e graph.Event) {
		if e.Kind != graph.Custom {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch p := e.Payload.(type) {
		case events.LaneSession:
			if e.Name == events.EventLaneStarted {
				started = append(started, p)
			} else if e.Name == events.EventLaneFinished {
				finished = append(finished, p)
			}
		case events.AgentUsage:
			if p.Role == string(agent.RoleDeveloper) {
				usage = append(usage, p)
			}
		}
	})
	defer unsub()
	res, err := h.start(lanePlan, state.RunConfig{AutoApprove: true, Parallel: 2})
	mustDone(t, res, err, state.RunCompleted)
	mu.Lock()
	defer mu.Unlock()
	byLane := func(a, b events.LaneSession) int { return a.Lane - b.Lane }
	slices.SortFunc(started, byLane)
	slices.SortFunc(finished, byLane)
	if len(started) != 3 || len(finished) != 3 {
		t.Fatalf("started %+v, finished %+v: want 3 of each", started, finished)
	}
	for i, want := range []string{"1", "2", "3"} {
		s, f := started[i], finished[i]
		if s.Phase != 1 || s.Lane != i+1 || !slices.Equal(s.Tasks, []string{want}) || s.Attempt != 1 || s.RunID != "r-1" || s.Status != "" {
			t.Errorf("lane_started %d = %+v", i+1, s)
		}
		if f.Lane != i+1 || !slices.Equal(f.Tasks, []string{want}) || f.Status != events.LaneDone || f.Error != "" {
			t.Errorf("lane_finished %d = %+v", i+1, f)
		}
	}
	if len(usage) != 4 {
		t.Fatalf("developer usage events %+v, want 4", usage)
	}
	lanes := map[int]events.AgentUsage{}
	for _, u := range usage {
		lanes[u.Lane] = u
	}
	if u := lanes[1]; u.Phase != 1 || !slices.Equal(u.Tasks, []string{"1"}) || u.InputTokens != 10 {
		t.Errorf("lane 1's usage %+v", u)
	}
	if u := lanes[0]; u.Phase != 0 || u.Tasks != nil || len(lanes) != 4 {
		t.Errorf("the phase of one's usage %+v (usage by lane %v)", u, lanes)
	}
}

// TestLaneFinishedCarriesTheLanesError: a lane whose agent fails ends
// with lane_finished naming it failed, with the agent's error.
func TestLaneFinishedCarriesTheLanesError(t *testing.T) {
	h := newHarness(t, strings.Replace(laneScript, "    summary: bye\n", "    summary: bye\n    result: failed\n    error: the bye tests will not pass\n", 1))
	var mu sync.Mutex
	var finished []events.LaneSession
	unsub := h.runner.Subscribe(func(e graph.Event) {
		if p, ok := e.Payload.(events.LaneSession); ok && e.Name == events.EventLaneFinished {
			mu.Lock()
			finished = append(finished, p)
			mu.Unlock()
		}
	})
	defer unsub()
	_, _ = h.start(lanePlan, state.RunConfig{AutoApprove: true, Parallel: 3})
	mu.Lock()
	defer mu.Unlock()
	for _, f := range finished {
		if f.Lane == 2 && f.Status == events.LaneFailed && strings.Contains(f.Error, "bye tests will not pass") && slices.Equal(f.Tasks, []string{"2"}) {
			return
		}
	}
	t.Fatalf("no failed lane_finished for lane 2 in %+v", finished)
}

// TestLanesStopAtTheRunBudget: three independent lanes, one at a time,
// each session costing $0.50, under max_run_cost_usd 0.60. The budget
// is checked before each lane starts, with what the phase's finished
// lanes spent (not yet in the run's state): the second lane starts
// ($0.50 spent), the third does not ($1.00), and the run halts at the
// budget stop, having run two sessions, not three.
func TestLanesStopAtTheRunBudget(t *testing.T) {
	var script strings.Builder
	script.WriteString("developer:\n")
	for _, id := range []string{"1", "2", "3"} {
		script.WriteString("  - phase: 1\n    task: \"" + id + "\"\n    usage: {cost_usd: 0.5}\n    actions:\n      - write: {path: f" + id + ".txt, content: \"x\\n\"}\n")
	}
	h := newHarness(t, script.String())
	cfg := state.RunConfig{AutoApprove: true, Parallel: 1}
	cfg.Limits.MaxRunCostUSD = 0.6
	res, err := h.start(disjointPlan("one", "two", "three"), cfg)
	s := mustDone(t, res, err, state.RunHalted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if len(devs) != 2 {
		t.Fatalf("developer sessions: %d, want 2 (the third lane must not start)", len(devs))
	}
	done := 0
	for _, l := range s.Progress.Phases[0].Lanes {
		if l.Status == state.LaneDone {
			done++
		}
	}
	if done != 2 {
		t.Fatalf("lanes done: %d, want 2: %+v", done, s.Progress.Phases[0].Lanes)
	}
	if errs := strings.Join(s.Errors, "\n"); !strings.Contains(errs, "the run budget is spent: max_run_cost_usd 0.60: $1.00 spent") {
		t.Errorf("the run's errors do not name the budget and its true spend: %q", errs)
	}
}
