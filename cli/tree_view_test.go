package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// treeStates are run states that the three pictures of a run (status,
// the live tree, status --watch) once drew differently, at now.
func treeStates(now time.Time) map[string]state.ExecutionState {
	start := now.Add(-10 * time.Minute)
	base := func() state.ExecutionState {
		var s state.ExecutionState
		s.Run = state.RunInfo{ID: "r-tree", Goal: "calc"}
		s.Status = state.RunRunning
		s.Plan.Tasks = []state.Task{
			{ID: "1a", Title: "Tests for Add", Type: state.TypeTest},
			{ID: "1b", Title: "Tests for Parse", Type: state.TypeTest},
			{ID: "2", Title: "Add and Parse", Type: state.TypeImpl},
			{ID: "3a", Title: "Tests for Sub", Type: state.TypeTest},
			{ID: "3b", Title: "Sub", Type: state.TypeImpl},
		}
		s.Plan.Phases = []state.Phase{{Index: 0, TaskIDs: []string{"1a", "1b"}}, {Index: 1, TaskIDs: []string{"2"}}, {Index: 2, TaskIDs: []string{"3a", "3b"}}}
		s.Progress.Phases = make([]state.PhaseState, 3)
		for i, ph := range s.Plan.Phases {
			s.Progress.Phases[i].Index = i
			for _, id := range ph.TaskIDs {
				s.Progress.Phases[i].Tasks = append(s.Progress.Phases[i].Tasks, state.TaskState{TaskID: id})
			}
		}
		return s
	}
	set := func(s *state.ExecutionState, i int, st state.PhaseStatus, attempt int, from, to time.Time, commit string) {
		ps := &s.Progress.Phases[i]
		ps.Status, ps.Attempt, ps.StartedAt, ps.CompletedAt, ps.PostCommit = st, attempt, from, to, commit
		for j := range ps.Tasks {
			ps.Tasks[j].Status, ps.Tasks[j].Attempt = st, attempt
		}
	}
	done1 := func(s *state.ExecutionState) {
		set(s, 0, state.PhaseCompleted, 1, start, start.Add(75*time.Second), "0123456789abcdef")
	}

	retrying := base()
	done1(&retrying)
	set(&retrying, 1, state.PhaseRetrying, 2, start.Add(2*time.Minute), time.Time{}, "")

	mixed := base()
	done1(&mixed)
	set(&mixed, 1, state.PhaseCompleted, 1, start.Add(2*time.Minute), start.Add(4*time.Minute), "fedcba9876543210")
	set(&mixed, 2, state.PhaseRunning, 1, start.Add(5*time.Minute), time.Time{}, "")
	mixed.Progress.Phases[2].Tasks[0].Status = state.PhaseCompleted // the test task is done, the impl task runs

	halted := base()
	done1(&halted)
	halted.Status = state.RunHalted
	set(&halted, 1, state.PhaseFailed, 2, start.Add(2*time.Minute), start.Add(9*time.Minute), "")
	halted.Progress.Phases[1].Lanes = []state.LaneProgress{{Tasks: []string{"2a", "2b"}, Status: state.LaneFailed, Attempt: 2, Iteration: 3}}
	halted.Errors = []string{"phase 2 halted after 2 attempt(s), the last with 3 session(s): tests fail"}

	review := base()
	done1(&review)
	set(&review, 1, state.PhaseRunning, 1, start.Add(2*time.Minute), time.Time{}, "")
	review.Progress.Phases[1].Lanes = []state.LaneProgress{{Tasks: []string{"2a", "2b"}, Status: state.LaneDone, Attempt: 1, Iteration: 1}}

	completed := base()
	completed.Status = state.RunCompleted
	done1(&completed)
	set(&completed, 1, state.PhaseCompleted, 2, start.Add(2*time.Minute), start.Add(4*time.Minute), "fedcba9876543210")
	set(&completed, 2, state.PhaseCompleted, 1, start.Add(5*time.Minute), start.Add(6*time.Minute), "aaaabbbbccccdddd")

	return map[string]state.ExecutionState{"retrying": retrying, "mixed test+impl": mixed, "halted": halted, "in review": review, "completed": completed}
}

// phaseLines are the phase tree's lines of a picture: the phases and
// their tasks, without the picture's own header and footer.
func phaseLines(picture string) []string {
	var out []string
	for _, l := range strings.Split(picture, "\n") {
		if strings.HasPrefix(l, "Phase ") || strings.HasPrefix(l, "  ├── ") || strings.HasPrefix(l, "  └── ") {
			out = append(out, l)
		}
	}
	return out
}

// TestStatusLiveAndWatchDrawTheSameTree renders one run state through
// each of the three pictures: their phase trees must be line for line
// the same.
func TestStatusLiveAndWatchDrawTheSameTree(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// The line each state is about, as all three must draw it.
	want := map[string][]string{
		"retrying":        {"Phase 2 (impl): ● Retrying (8m0s, attempt 2)"},
		"mixed test+impl": {"Phase 3 (test+impl): ● Running (5m0s)", "  ├── ✓ [test] 3a Tests for Sub", "  └── ● [impl] 3b Sub"},
		"halted":          {"Phase 2 (impl): ✗ Failed (7m0s, attempt 2, review 3)", "  └── ✗ [impl] 2 Add and Parse"},
		"in review":       {"Phase 2 (impl): ● Running (8m0s, review 1)"},
		"completed":       {"Phase 1 (test): ✓ Completed (1m15s, 0123456)", "Phase 2 (impl): ✓ Completed (2m0s, attempt 2, fedcba9)", "Phase 3 (test+impl): ✓ Completed (1m0s, aaaabbb)"},
	}
	for name, s := range treeStates(now) {
		t.Run(name, func(t *testing.T) {
			snap := graph.Snapshot[state.ExecutionState]{RunID: s.Run.ID, Seq: 7, State: s}
			view := runview.RunOf(host.RunStatus{Snapshot: snap}, now)

			var st strings.Builder
			writeStatusTree(&st, view)
			status := phaseLines(st.String())

			l := &liveTree{now: func() time.Time { return now }, state: s, have: true}
			live := phaseLines(strings.Join(l.frame(), "\n"))

			var wt strings.Builder
			writeWatchTree(&wt, view.Tree)
			watch := phaseLines(wt.String())

			if len(status) == 0 || !slices.Equal(status, live) || !slices.Equal(status, watch) {
				t.Fatalf("the pictures disagree\nstatus:\n%s\nlive:\n%s\nwatch:\n%s",
					strings.Join(status, "\n"), strings.Join(live, "\n"), strings.Join(watch, "\n"))
			}
			for _, l := range want[name] {
				if !slices.Contains(status, l) {
					t.Errorf("no line %q in the tree:\n%s", l, strings.Join(status, "\n"))
				}
			}
		})
	}
}

// TestFinishedRunDrawsOneTreeEverywhere runs the demo on a terminal to the
// end, then reads the run back with status and status --watch: the live
// tree's last frame and the two commands draw the same phase tree.
func TestFinishedRunDrawsOneTreeEverywhere(t *testing.T) {
	t.Parallel()
	dir, v := terminalDemoRun(t, "r-one")
	screen := v.lines()
	heads := linesWith(screen, "Phase 1 ")
	if len(heads) != 1 {
		t.Fatalf("%d trees on the screen, want 1:\n%s", len(heads), strings.Join(screen, "\n"))
	}
	live := phaseLines(strings.Join(screen[heads[0]:], "\n"))

	out, code := gaffer(t, "--repo", dir, "status", "r-one")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	status := phaseLines(out)
	out, code = gaffer(t, "--repo", dir, "status", "r-one", "--watch")
	if code != 0 {
		t.Fatalf("status --watch: exit %d\n%s", code, out)
	}
	watch := phaseLines(out)

	// The demo's phase 2 is approved at its second attempt.
	if !slices.ContainsFunc(status, func(l string) bool { return strings.HasPrefix(l, "Phase 2 ") && strings.Contains(l, "attempt 2") }) ||
		!slices.Equal(status, live) || !slices.Equal(status, watch) {
		t.Fatalf("the pictures disagree\nstatus:\n%s\nlive:\n%s\nwatch:\n%s",
			strings.Join(status, "\n"), strings.Join(live, "\n"), strings.Join(watch, "\n"))
	}
}

// TestStatusJSONKeepsItsFields reads a finished run with status --json and
// status --watch --json: every field their readers know is still there
// under its name (fields may be added, never renamed).
func TestStatusJSONKeepsItsFields(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-json"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	has := func(what string, obj map[string]any, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s has no %q: %v", what, k, obj)
			}
		}
	}
	read := func(args ...string) map[string]any {
		t.Helper()
		out, code := gaffer(t, append([]string{"--repo", dir, "status", "r-json", "--json"}, args...)...)
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil {
			t.Fatalf("status --json %v: exit %d, %v\n%s", args, code, err, out)
		}
		return m
	}
	first := func(m map[string]any, key string) map[string]any {
		t.Helper()
		l, _ := m[key].([]any)
		if len(l) == 0 {
			t.Fatalf("no %s in %v", key, m)
		}
		o, _ := l[0].(map[string]any)
		return o
	}

	st := read()
	has("status --json", st, "run_id", "status", "goal", "mode", "exec_dir", "created_at", "current_phase", "plan_revision", "phases", "usage", "checkpoint", "plan")
	has("status --json phase", first(st, "phases"), "number", "tasks", "status", "attempt", "pre_commit", "post_commit", "review")

	w := read("--watch")
	has("status --watch --json", w, "run_id", "status", "goal", "checkpoint", "current_phase", "review_iteration", "phases", "usage")
	wp := first(w, "phases")
	has("status --watch --json phase", wp, "number", "status", "attempt", "duration_seconds", "commit", "tasks")
	has("status --watch --json task", first(wp, "tasks"), "id", "title", "type", "status")
}
