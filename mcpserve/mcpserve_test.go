package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

func TestCappedKeepsWholeLinesAndCountsTheRest(t *testing.T) {
	c := &capped{max: 10}
	for _, s := range []string{"abc\n", "defgh\n", "ijklmnop\n"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	b := c.bounded()
	if b.Text != "abc\ndefgh\n" || !b.Truncated || b.Bytes != 10 || b.TotalBytes != 19 || !strings.Contains(b.Note, "10 of 19") {
		t.Fatalf("bounded = %+v", b)
	}
	c = &capped{max: 100}
	c.Write([]byte("short\n"))
	if b := c.bounded(); b.Truncated || b.Text != "short\n" || b.Note != "" {
		t.Fatalf("uncut = %+v", b)
	}
	for asked, want := range map[int]int{0: defaultMaxBytes, -5: defaultMaxBytes, 300: 300, maxMaxBytes * 2: maxMaxBytes} {
		if got := byteBound(asked); got != want {
			t.Errorf("byteBound(%d) = %d, want %d", asked, got, want)
		}
	}
}

func TestCheckPlan(t *testing.T) {
	good := "### Task 1: tests\n- type: test\n- depends on: none\n\n### Task 2: code\n- type: impl\n- depends on: 1\n"
	c := checkPlan(good, false)
	if !c.Valid || c.Mode != "phased" || len(c.Phases) != 2 || c.Phases[1].Tasks[0] != "2" || len(c.Problems) != 0 {
		t.Fatalf("good plan: %+v", c)
	}
	// Two tasks of one layer with their own files: two lanes.
	wide := "### Task 1a: a\n- type: test\n- depends on: none\n- files: a_test.go\n\n### Task 1b: b\n- type: test\n- depends on: none\n- files: b_test.go\n"
	if c := checkPlan(wide, false); !c.Valid || len(c.Phases) != 1 || len(c.Phases[0].Lanes) != 2 || c.Phases[0].Lanes[1][0] != "1b" {
		t.Fatalf("two lanes: %+v", c)
	}
	// An impl task without a test before it: the TDD check, unless asked off.
	noTest := "### Task 1: code\n- type: impl\n- depends on: none\n"
	if c := checkPlan(noTest, false); c.Valid || len(c.Problems) == 0 {
		t.Fatalf("TDD: %+v", c)
	}
	if c := checkPlan(noTest, true); !c.Valid {
		t.Fatalf("no_tdd: %+v", c)
	}
	if c := checkPlan("### Task 1: a\n- depends on: 7\n", false); c.Valid || c.Problems[0].Line != 2 {
		t.Fatalf("unknown dependency: %+v", c)
	}
	huge := strings.Repeat("x", state.MaxPlanBytes+1)
	if c := checkPlan(huge, false); c.Valid || len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Msg, "over the limit") {
		t.Fatalf("huge: %+v", c)
	}
}

func TestWaitReasonAndProgress(t *testing.T) {
	phases := []runview.RunPhase{{Number: 1, Status: "completed", Attempt: 1}, {Number: 2, Status: "running", Attempt: 2, Tasks: []string{"2a", "2b"}}, {Number: 3, Status: "pending"}}
	for _, c := range []struct {
		v    runview.Run
		want string
	}{
		{runview.Run{Status: "running"}, ""},
		{runview.Run{Status: "queued"}, ""},
		{runview.Run{Status: "awaiting_approval"}, WaitNeedsHuman},
		{runview.Run{Status: "completed"}, WaitEnded},
		{runview.Run{Status: "halted"}, WaitEnded},
		{runview.Run{Status: "running", Stopped: true}, WaitStopped},
	} {
		if got := waitReason(c.v); got != c.want {
			t.Errorf("waitReason(%s, stopped %v) = %q, want %q", c.v.Status, c.v.Stopped, got, c.want)
		}
	}
	done, total, msg := progressOf(runview.Run{RunID: "r-1", Status: "running", CurrentPhase: 2, Phases: phases}, nil)
	if done != 1 || total != 3 || msg != "r-1: running, phase 2 of 3 running (attempt 2), tasks 2a, 2b" {
		t.Fatalf("progressOf = %v, %v, %q", done, total, msg)
	}
	lanes := []state.LaneProgress{{Tasks: []string{"2a"}, Status: state.LaneDone, Attempt: 1}, {Tasks: []string{"2b", "2c"}, Status: state.LaneRunning, Attempt: 2}}
	_, _, msg = progressOf(runview.Run{RunID: "r-1", Status: "running", CurrentPhase: 2, Phases: phases}, lanes)
	if !strings.HasSuffix(msg, "; lanes: 2a done, 2b+2c running (attempt 2)") {
		t.Fatalf("progressOf with lanes = %q", msg)
	}
}

func TestParseResource(t *testing.T) {
	for uri, want := range map[string]resourceRef{
		"gaffer://runs/r-20260101-abc/plan":       {RunID: "r-20260101-abc", What: "plan"},
		"gaffer://runs/r-20260101-abc/story":      {RunID: "r-20260101-abc", What: "story"},
		"gaffer://runs/r-20260101-abc/diff":       {RunID: "r-20260101-abc", What: "diff"},
		"gaffer://runs/r-20260101-abc/summary/12": {RunID: "r-20260101-abc", What: "summary", Phase: 12},
		"gaffer://runs/r-20260101-abc/records/2":  {RunID: "r-20260101-abc", What: "records", Phase: 2},
	} {
		got, err := parseResource(uri)
		if err != nil || got != want {
			t.Errorf("parseResource(%s) = %+v, %v", uri, got, err)
		}
	}
	for _, uri := range []string{"gaffer://runs/r-1/summary/0", "gaffer://runs/r-1/summary/x", "gaffer://runs/r-1/records", "gaffer://runs/r-1/records/0", "gaffer://runs/r-1/secrets",
		"gaffer://runs//plan", "gaffer://runs/r-1/plan/more", "file:///etc/passwd", "gaffer://runs/..%2f/plan"} {
		if _, err := parseResource(uri); err == nil {
			t.Errorf("parseResource(%s): no error", uri)
		}
	}
}

func TestStoryOf(t *testing.T) {
	s := "# Phase 2\n\nfiles\n\n## Story so far\n\n- decided X\n\n## Restore\n\ngit show B\n"
	if got := storyOf(s, 2); got != "## Story so far\n\n- decided X\n\n" {
		t.Fatalf("storyOf = %q", got)
	}
	if got := storyOf("# Phase 1\n", 1); !strings.Contains(got, "no story") {
		t.Fatalf("storyOf without one = %q", got)
	}
}

// TestRunStatusSchemaTakesTheRunAsWritten checks that run_status's output
// schema, inferred from runview.Run, accepts a run as it is marshalled:
// its enumerations (a review's verdict, a task's type, …) are strings.
func TestRunStatusSchemaTakesTheRunAsWritten(t *testing.T) {
	sch, err := schemaOf[runview.Run]()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	v := runview.Run{RunID: "r-1", Status: "running", Phases: []runview.RunPhase{{Number: 1, Status: "completed",
		Review: &state.ReviewResult{Approved: false, Items: []state.ReviewItem{{Text: "fix", Verdict: state.VerdictImplement}}}}},
		Plan: &runview.Plan{Tasks: []state.Task{{ID: "1", Type: state.TypeTest}}}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(doc); err != nil {
		t.Fatalf("the schema refuses a run as written: %v\n%s", err, b)
	}
}
