package runview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/state"
)

// TestLanesDashboard walks seed 002's dashboard for a plan of 4 tasks in
// 2 layers: phase 1 of two lanes, one done and one running; phase 2 of two
// lanes, pending. The phase groups, each lane's mark, title and time, a
// stopped run's lanes, a failed lane's error on its line, and the JSON.
func TestLanesDashboard(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	plan := state.Plan{Mode: state.ModePhased,
		Tasks: []state.Task{{ID: "1", Title: "Write model tests", Files: []string{"model_test.go"}}, {ID: "2", Title: "Write API tests", Files: []string{"api_test.go"}},
			{ID: "3", Title: "Model", DependsOn: []string{"1"}, Files: []string{"model.go"}}, {ID: "4", Title: "API", DependsOn: []string{"2"}, Files: []string{"api.go"}}},
		Phases: []state.Phase{{Index: 0, TaskIDs: []string{"1", "2"}}, {Index: 1, TaskIDs: []string{"3", "4"}}}}
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1", Goal: "models"}, Status: state.RunRunning, Plan: plan}
	s.Progress.Phases = []state.PhaseState{
		{Index: 0, Status: state.PhaseRunning, Attempt: 1, StartedAt: now.Add(-time.Minute), Lanes: []state.LaneProgress{
			{Tasks: []string{"1"}, Status: state.LaneDone, Attempt: 1, StartedAt: now.Add(-time.Minute), CompletedAt: now.Add(-30 * time.Second),
				Usage: state.Usage{InputTokens: 100, CostUSD: 0.5}},
			{Tasks: []string{"2"}, Status: state.LaneRunning, Attempt: 1, StartedAt: now.Add(-40 * time.Second)}}},
		{Index: 1, Status: state.PhasePending}}

	v := Of(s, state.RunRunning, now)
	if len(v.Phases) != 2 || len(v.Phases[0].Lanes) != 2 || len(v.Phases[1].Lanes) != 0 {
		t.Fatalf("phases %+v", v.Phases)
	}
	if got, want := v.Phases[0].LanesLine(), "✓ 1 Write model tests (30s) · ● 2 Write API tests (running 40s)"; got != want {
		t.Errorf("phase 1's lanes:\n got %q\nwant %q", got, want)
	}
	if got := v.Phases[1].LanesLine(); got != "" {
		t.Errorf("phase 2, not started: %q, want no lanes line", got)
	}
	if l := v.Phases[0].Lanes[0]; l.Usage.CostUSD != 0.5 || l.Number != 1 || l.Attempt != 1 {
		t.Errorf("lane 1: %+v", l)
	}
	b, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(b), `"lanes":[{"number":1,"tasks":["1"],"title":"Write model tests","status":"done"`) {
		t.Errorf("JSON: %s, %v", b, err)
	}

	// The run stopped: the running lane is drawn stopped.
	p := v.Phases[0]
	p.stop()
	if got, want := p.LanesLine(), "✓ 1 Write model tests (30s) · ◌ 2 Write API tests (stopped)"; got != want {
		t.Errorf("stopped:\n got %q\nwant %q", got, want)
	}

	// Phase 2 under way: a lane of two tasks, and a lane that failed says
	// why, on one line however long its error.
	s.Progress.Phases[0] = state.PhaseState{Index: 0, Status: state.PhaseCompleted, Attempt: 1}
	s.Progress.Phases[1] = state.PhaseState{Index: 1, Status: state.PhaseRunning, Attempt: 1, Lanes: []state.LaneProgress{
		{Tasks: []string{"3"}, Status: state.LaneFailed, Attempt: 2, Error: "go test failed:\n" + strings.Repeat("x", 300)},
		{Tasks: []string{"4"}, Status: state.LanePending}}}
	got := Of(s, state.RunRunning, now).Phases[1].LanesLine()
	if !strings.HasPrefix(got, "✗ 3 Model (attempt 2, failed: go test failed: xxx") || !strings.HasSuffix(got, " · ○ 4 API") || strings.Contains(got, "\n") || len(got) > 200 {
		t.Errorf("failed lane: %q", got)
	}
}
