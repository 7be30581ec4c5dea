package state

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func tasksWith(files ...[]string) []Task {
	ids := []string{"1", "2", "3", "4", "5", "6"}
	tasks := make([]Task, len(files))
	for i, f := range files {
		tasks[i] = Task{ID: ids[i], Title: "t" + ids[i], Files: f}
	}
	return tasks
}

func TestGroupLanes(t *testing.T) {
	cases := []struct {
		name  string
		tasks []Task
		want  [][]string
	}{
		{"none", nil, nil},
		{"one task", tasksWith(nil), [][]string{{"1"}}},
		{"disjoint", tasksWith([]string{"a.go"}, []string{"b.go"}, []string{"c.go"}), [][]string{{"1"}, {"2"}, {"3"}}},
		{"same file", tasksWith([]string{"a.go"}, []string{"b.go"}, []string{"a.go", "c.go"}), [][]string{{"1", "3"}, {"2"}}},
		{"no files share one lane", tasksWith(nil, []string{"b.go"}, nil), [][]string{{"1", "3"}, {"2"}}},
		{"a directory holds a file", tasksWith([]string{"pkg/a.go"}, []string{"pkg/"}, []string{"pkgx/b.go"}), [][]string{{"1", "2"}, {"3"}}},
		{"paths are cleaned", tasksWith([]string{"./pkg/a.go"}, []string{"pkg//a.go"}), [][]string{{"1", "2"}}},
		{"the whole tree", tasksWith([]string{"a.go"}, []string{"."}, []string{"b.go"}), [][]string{{"1", "2", "3"}}},
		{"transitive", tasksWith([]string{"a.go"}, []string{"b.go"}, []string{"c.go"}, []string{"b.go", "c.go"}), [][]string{{"1"}, {"2", "3", "4"}}},
		{"a prefix that is not a directory", tasksWith([]string{"a.go"}, []string{"a.go.orig"}), [][]string{{"1"}, {"2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := GroupLanes(c.tasks); !reflect.DeepEqual(got, c.want) {
				t.Errorf("GroupLanes = %v, want %v", got, c.want)
			}
		})
	}
}

func TestLanesLine(t *testing.T) {
	p, err := ParsePlan("plan.md", `# p
### Task 1: a
- type: test
- depends on: none
- files: a_test.go
### Task 2: b
- type: test
- depends on: none
- files: a_test.go, x.go
### Task 3: c
- type: test
- depends on: none
- files: c_test.go
### Task 4: d
- type: impl
- depends on: 1, 2, 3
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.LanesLine(0), "Phase 1 (2 lanes): 1, 2 | 3"; got != want {
		t.Errorf("LanesLine(0) = %q, want %q", got, want)
	}
	if got, want := p.LanesLine(1), "Phase 2 (1 lane): 4"; got != want {
		t.Errorf("LanesLine(1) = %q, want %q", got, want)
	}
	task, err := ParsePlan("plan.md", "### Task 1: a\n- files: a.go\n### Task 2: b\n- files: b.go\n")
	if err != nil {
		t.Fatal(err)
	}
	for i := range task.Phases {
		if n := len(task.PhaseLanes(i)); n != 1 {
			t.Errorf("task mode phase %d: %d lanes, want 1", i+1, n)
		}
	}
}

func TestParallelConfig(t *testing.T) {
	c, err := RunConfig{}.Validate()
	if err != nil || c.Parallel != DefaultParallel {
		t.Errorf("Validate of no parallel = %d, %v; want %d", c.Parallel, err, DefaultParallel)
	}
	for _, bad := range []int{-1, MaxParallel + 1} {
		if _, err := (RunConfig{Parallel: bad}).Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "parallel") {
			t.Errorf("parallel %d: %v", bad, err)
		}
	}
	if ParallelOf(RunConfig{}) != DefaultParallel || ParallelOf(RunConfig{Parallel: 1}) != 1 {
		t.Error("ParallelOf")
	}
}

// v1 turns a schema 2 encoding of s into what gaffer 9c44d1a wrote: no
// lanes, the cursor in the progress.
func v1(t *testing.T, s ExecutionState, cursor map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustEncode(t, s), &m); err != nil {
		t.Fatal(err)
	}
	m["schema_version"] = 1
	p := m["progress"].(map[string]any)
	for _, ps := range p["phases"].([]any) {
		delete(ps.(map[string]any), "lanes")
	}
	for k, v := range cursor {
		p[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeMigratesSchema1 reads states of the single-cursor schema:
// the phases that started get one lane of all their tasks, and the
// current phase's lane the cursor's session and review iteration.
func TestDecodeMigratesSchema1(t *testing.T) {
	s := sample(t)
	ps, _ := s.PhaseState(0)
	ps.Lanes, ps.Status = nil, PhaseRunning
	s, _ = s.WithPhaseState(ps)
	for _, c := range []struct {
		name    string
		cursor  map[string]any
		lane    LaneProgress
		current int
	}{
		{"awaiting review", map[string]any{"current_phase": 0, "review_iteration": 2, "driver_session_id": "sess-9"},
			LaneProgress{Tasks: []string{"1"}, Status: LaneDone, Attempt: 1, Iteration: 2, SessionID: "sess-9", Base: "abc", StartedAt: ps.StartedAt}, 0},
		{"fresh session due", map[string]any{"current_phase": 0, "review_iteration": 0},
			LaneProgress{Tasks: []string{"1"}, Status: LanePending, Attempt: 1, Base: "abc", StartedAt: ps.StartedAt}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(v1(t, s, c.cursor))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(got.Progress.Phases[0].Lanes); n != 1 {
				t.Fatalf("phase 1 has %d lanes, want 1", n)
			}
			if l := got.Progress.Phases[0].Lanes[0]; !l.Equal(c.lane) {
				t.Errorf("lane = %+v\nwant   %+v", l, c.lane)
			}
			if got.Progress.Phases[1].Lanes != nil {
				t.Errorf("phase 2, not started, has lanes %+v", got.Progress.Phases[1].Lanes)
			}
			if got.Progress.CurrentPhase() != c.current {
				t.Errorf("current phase %d, want %d", got.Progress.CurrentPhase(), c.current)
			}
			again, err := Decode(mustEncode(t, got))
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("schema 2 round trip of the migrated state: %v", err)
			}
		})
	}
	// A failed and a completed phase.
	ps.Status, ps.Error = PhaseFailed, "tests fail"
	f, _ := s.WithPhaseState(ps)
	got, err := Decode(v1(t, f, map[string]any{"current_phase": 0, "review_iteration": 1}))
	if err != nil {
		t.Fatal(err)
	}
	if l := got.Progress.Phases[0].Lanes[0]; l.Status != LaneFailed || l.Error != "tests fail" {
		t.Errorf("failed phase's lane = %+v", l)
	}
	if _, err := Decode(v1(t, s, map[string]any{"current_phase": "two"})); !errors.Is(err, ErrDecode) {
		t.Errorf("a bad cursor: %v", err)
	}
	if _, err := Decode(v1(t, s, map[string]any{"current_phase": 0, "driver_session": "x"})); !errors.Is(err, ErrDecode) {
		t.Errorf("an unknown field beside the cursor: %v", err)
	}
}

func TestLaneStatusNames(t *testing.T) {
	for st, want := range map[LaneStatus]string{LanePending: "pending", LaneRunning: "running", LaneDone: "done", LaneFailed: "failed", 9: "LaneStatus(9)"} {
		if st.String() != want {
			t.Errorf("%d: %q, want %q", int(st), st.String(), want)
		}
	}
	l := LaneProgress{Tasks: []string{"2a", "2b"}, Status: LaneDone, Attempt: 1, SessionID: "s", WorkTree: "/w", Head: "h", Error: "e", Conflict: []string{"x"}}
	if l.Label() != "2a+2b" {
		t.Errorf("Label = %q", l.Label())
	}
	f := l.Fresh("b2")
	if f.Status != LanePending || f.Attempt != 2 || f.SessionID != "" || f.WorkTree != "" || f.Head != "" || f.Base != "b2" || f.Error != "" || f.Conflict != nil {
		t.Errorf("Fresh = %+v", f)
	}
	if l.Conflict == nil || l.SessionID != "s" {
		t.Error("Fresh changed its receiver")
	}
}

// TestRedoLanes: a new attempt keeps the lanes that are done with their
// work at Head and redoes, fresh from the pre-phase commit, the ones
// picked, the ones not done, and the ones built on the other lanes'
// combined work; a phase of one lane, and one where none is picked, is
// redone whole.
func TestRedoLanes(t *testing.T) {
	done := func(tasks string, head string) LaneProgress {
		return LaneProgress{Tasks: []string{tasks}, Status: LaneDone, Attempt: 1, SessionID: "s-" + tasks, Base: "pre", Head: head, WorkTree: "/t/" + tasks}
	}
	failed := LaneProgress{Tasks: []string{"b"}, Status: LaneFailed, Attempt: 2, SessionID: "s-b", Base: "pre", Error: "no", WorkTree: "/t/b"}
	onOthers := done("d", "hd")
	onOthers.Base, onOthers.Attempt = "combined", 2
	ps := PhaseState{Index: 0, Attempt: 3, PreCommit: "pre", Lanes: []LaneProgress{done("a", "ha"), failed, done("c", "hc"), onOthers}}
	isB := func(l LaneProgress) bool { return l.Label() == "b" }
	got := ps.RedoLanes(isB)
	if !got.Lanes[0].Equal(ps.Lanes[0]) || !got.Lanes[2].Equal(ps.Lanes[2]) {
		t.Fatalf("the done lanes changed: %+v, %+v", got.Lanes[0], got.Lanes[2])
	}
	for _, k := range []int{1, 3} {
		l := got.Lanes[k]
		if l.Status != LanePending || l.Attempt != ps.Lanes[k].Attempt+1 || l.SessionID != "" || l.Base != "pre" || l.Head != "" || l.Error != "" || l.WorkTree != "" {
			t.Errorf("lane %d, to redo fresh: %+v", k+1, l)
		}
	}
	if ps.Lanes[1].Status != LaneFailed || ps.Lanes[1].SessionID != "s-b" {
		t.Error("RedoLanes changed its receiver's lanes")
	}
	named := ps.RedoLanes(func(l LaneProgress) bool { return l.Label() == "c" })
	if named.Lanes[2].Status != LanePending || named.Lanes[1].Status != LanePending || named.Lanes[0].Status != LaneDone {
		t.Errorf("a named lane and a failed one are redone, the others kept: %+v", named.Lanes)
	}
	for name, p := range map[string]PhaseState{
		"none picked": {Attempt: 3, PreCommit: "pre", Lanes: []LaneProgress{done("a", "ha"), done("c", "hc")}},
		"one lane":    {Attempt: 3, PreCommit: "pre", Lanes: []LaneProgress{done("a", "ha")}},
	} {
		for k, l := range p.RedoLanes(isB).Lanes {
			if l.Status != LanePending || l.Attempt != 3 || l.Head != "" || l.SessionID != "" {
				t.Errorf("%s: lane %d %+v, want fresh at the phase's attempt", name, k+1, l)
			}
		}
	}
}
