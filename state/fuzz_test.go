package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkPhases checks what every layering must hold: phases numbered from
// 0, none empty, every task in exactly one phase, and every task in a
// later phase than each of its dependencies.
func checkPhases(t *testing.T, tasks []Task, phases []Phase) map[string]int {
	t.Helper()
	phaseOf := make(map[string]int)
	for i, ph := range phases {
		if ph.Index != i {
			t.Fatalf("phase %d has index %d", i, ph.Index)
		}
		if len(ph.TaskIDs) == 0 {
			t.Fatalf("phase %d is empty", i)
		}
		for _, id := range ph.TaskIDs {
			if _, dup := phaseOf[id]; dup {
				t.Fatalf("task %s is in two phases", id)
			}
			phaseOf[id] = i
		}
	}
	if len(phaseOf) != len(tasks) {
		t.Fatalf("%d tasks in phases, want %d", len(phaseOf), len(tasks))
	}
	for _, task := range tasks {
		p, ok := phaseOf[task.ID]
		if !ok {
			t.Fatalf("task %s is in no phase", task.ID)
		}
		for _, d := range task.DependsOn {
			if phaseOf[d] >= p {
				t.Fatalf("task %s (phase %d) depends on %s (phase %d)", task.ID, p, d, phaseOf[d])
			}
		}
	}
	return phaseOf
}

func planCorpus(f *testing.F) {
	paths, _ := filepath.Glob("testdata/plans/*.md")
	paths = append(paths, "../examples/demo/plan.md")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("### Task 1: a\n- depends on: 1\n")
	f.Add("### Task 1: a\n### Task 1: b\n- depends on: 2, 1\n")
	f.Add("```\n### Task 1: a\n~~~\n### Task 2: b\n```\n### Task 3: c\n")
	f.Add("### Task 1:\n- files:\n  - a\n  - b\n- type:\n- depends on:\n")
}

// FuzzParsePlan checks that ParsePlan never panics, that a plan it accepts
// is layered correctly in its mode and has a context for every phase, and
// that a plan it rejects is reported as problems on real lines.
func FuzzParsePlan(f *testing.F) {
	planCorpus(f)
	f.Fuzz(func(t *testing.T, src string) {
		p, err := ParsePlan("f.md", src)
		lines := strings.Count(normalize(src), "\n") + 1
		if err != nil {
			var pe *PlanError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error %v is not a *PlanError with problems", err)
			}
			for _, pr := range pe.Problems {
				if pr.Line < 0 || pr.Line > lines || pr.Msg == "" {
					t.Fatalf("problem %+v outside the plan's %d lines", pr, lines)
				}
			}
			return
		}
		checkPhases(t, p.Tasks, p.Phases)
		if p.Mode == ModeTask {
			for i, ph := range p.Phases {
				if len(ph.TaskIDs) != 1 || ph.TaskIDs[0] != p.Tasks[i].ID {
					t.Fatalf("task mode phase %d = %v, want task %s", i, ph.TaskIDs, p.Tasks[i].ID)
				}
			}
		}
		for _, task := range p.Tasks {
			if task.Line < 1 || task.EndLine < task.Line || task.EndLine > lines {
				t.Fatalf("task %s spans lines %d-%d of %d", task.ID, task.Line, task.EndLine, lines)
			}
		}
		for i := range p.Phases {
			if _, err := PhaseContext(p, i); err != nil {
				t.Fatalf("PhaseContext(%d): %v", i, err)
			}
		}
	})
}

// fuzzTasks builds up to 16 tasks from data: the first byte gives the
// count, each following pair of bytes one dependency (cycles and self
// dependencies included).
func fuzzTasks(data []byte) []Task {
	if len(data) == 0 {
		return nil
	}
	n := int(data[0])%16 + 1
	tasks := make([]Task, n)
	for i := range tasks {
		// Ids whose natural order differs from their text order: 1a, 1b, 1c, 2a, ..., 10a.
		tasks[i] = Task{ID: fmt.Sprintf("%d%c", i/3*3+1, 'a'+i%3), Line: i + 1}
	}
	for k := 1; k+1 < len(data); k += 2 {
		from, to := int(data[k])%n, int(data[k+1])%n
		tasks[from].DependsOn = append(tasks[from].DependsOn, tasks[to].ID)
	}
	return tasks
}

// naiveLayers computes each task's layer as the longest dependency path by
// plain recursion, or reports a cycle.
func naiveLayers(tasks []Task) (map[string]int, bool) {
	byID := make(map[string]Task)
	for _, t := range tasks {
		byID[t.ID] = t
	}
	layer := make(map[string]int)
	visiting := make(map[string]bool)
	var depth func(id string) (int, bool)
	depth = func(id string) (int, bool) {
		if l, ok := layer[id]; ok {
			return l, true
		}
		if visiting[id] {
			return 0, false
		}
		visiting[id] = true
		l := 0
		for _, d := range byID[id].DependsOn {
			dl, ok := depth(d)
			if !ok {
				return 0, false
			}
			l = max(l, dl+1)
		}
		visiting[id] = false
		layer[id] = l
		return l, true
	}
	for _, t := range tasks {
		if _, ok := depth(t.ID); !ok {
			return nil, false
		}
	}
	return layer, true
}

// FuzzLayerPhases checks LayerPhases against a naive longest-path
// computation on random dependency graphs: the same phase for every task,
// ids in natural order within a phase, and an error exactly when there is
// a cycle.
func FuzzLayerPhases(f *testing.F) {
	f.Add([]byte{6, 2, 0, 3, 1, 4, 2, 5, 3})
	f.Add([]byte{3, 0, 1, 1, 2, 2, 0})
	f.Add([]byte{1, 0, 0})
	f.Add([]byte{15})
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks := fuzzTasks(data)
		if len(tasks) == 0 {
			return
		}
		phases, err := LayerPhases(tasks)
		want, acyclic := naiveLayers(tasks)
		if !acyclic {
			if !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), "dependency cycle") {
				t.Fatalf("cycle not reported: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("LayerPhases: %v", err)
		}
		got := checkPhases(t, tasks, phases)
		for id, l := range want {
			if got[id] != l {
				t.Fatalf("task %s in phase %d, want %d", id, got[id], l)
			}
		}
		for _, ph := range phases {
			for i := 1; i < len(ph.TaskIDs); i++ {
				if CompareIDs(ph.TaskIDs[i-1], ph.TaskIDs[i]) >= 0 {
					t.Fatalf("phase %d out of order: %v", ph.Index, ph.TaskIDs)
				}
			}
		}
	})
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// encodes and decodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	s, err := NewRun(RunInfo{ID: "r", Goal: "g", CreatedAt: time.Unix(1e9, 0)}, RunConfig{})
	if err != nil {
		f.Fatal(err)
	}
	plan, _ := ParsePlan("p.md", "### Task 1: a\n- type: test\n- depends on: none\n### Task 2: b\n- type: impl\n")
	for _, st := range []ExecutionState{s, s.WithPlan(plan).WithUsage("developer", Usage{InputTokens: 3}).WithError("e")} {
		b, err := Encode(st)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema_version": 1, "status": "halted"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrDecode) && !errors.Is(err, ErrSchemaVersion) {
				t.Fatalf("error %v matches neither ErrDecode nor ErrSchemaVersion", err)
			}
			return
		}
		b1, err := Encode(st)
		if err != nil {
			return // e.g. a time JSON cannot represent; Decode's input was still valid
		}
		st2, err := Decode(b1)
		if err != nil {
			t.Fatalf("decoding an encoding: %v\n%s", err, b1)
		}
		if b2, _ := Encode(st2); !bytes.Equal(b1, b2) {
			t.Fatalf("re-encoding differs:\n%s\n%s", b1, b2)
		}
	})
}
