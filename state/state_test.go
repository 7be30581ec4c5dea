package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sample returns a state with every group filled in, so clones and the
// codec are tested on shared slices, maps and pointers.
func sample(t *testing.T) ExecutionState {
	t.Helper()
	s, err := NewRun(RunInfo{
		ID: "r-1", Goal: "Add a calculator", TrackerID: "GH-7",
		CreatedAt: time.Date(2026, 11, 23, 3, 30, 0, 0, time.UTC),
	}, RunConfig{
		Profile: "demo", ScriptPath: "script.yaml", AutoApprove: true, Pace: time.Second,
		Agents: Agents{Developer: AgentConfig{Driver: "script"}},
		Drivers: DriverSettings{
			Provider: "openai", APIKeyEnv: "OPENAI_API_KEY", Prices: map[string]Price{"m": {Input: 1}},
			CLIAgents: map[string]CLIAgent{"claude": {Command: []string{"claude"}, Env: map[string]string{"A": "b"}, PassEnv: []string{"X"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan{
		Markdown: "x", Preamble: "goal", Mode: ModePhased,
		Tasks: []Task{
			{ID: "1", Title: "t", Type: TypeTest, Files: []string{"a_test.go"}, Line: 1, EndLine: 3},
			{ID: "2", Title: "i", Type: TypeImpl, DependsOn: []string{"1"}, Files: []string{"a.go"}, Line: 4, EndLine: 6},
		},
		Phases: []Phase{{Index: 0, TaskIDs: []string{"1"}}, {Index: 1, TaskIDs: []string{"2"}}},
	}
	s = s.WithPlan(plan).WithUsage("developer", Usage{InputTokens: 10, CostUSD: 0.5}).WithError("boom")
	s, err = s.WithPhaseState(PhaseState{
		Index: 0, Status: PhaseRetrying, Attempt: 1, PreCommit: "abc", Untracked: []string{".env"},
		StartedAt: time.Date(2026, 11, 23, 3, 31, 0, 0, time.UTC),
		Review:    &ReviewResult{Comments: "no", Items: []ReviewItem{{Text: "fix", Verdict: VerdictImplement}}},
		Tasks:     []TaskState{{TaskID: "1", Status: PhaseRunning, Attempt: 1}},
		Lanes: []LaneProgress{{Tasks: []string{"1"}, Status: LanePending, Attempt: 1, Iteration: 1, SessionID: "sess-1",
			Base: "abc", Usage: Usage{InputTokens: 10, CostUSD: 0.5}, Conflict: []string{"a.go"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s.WithApproval(Approval{Decision: DecisionApproved, Feedback: "ok"})
}

func TestNewRunFixesDerivedValues(t *testing.T) {
	s := sample(t)
	if s.Run.Slug != "add-a-calculator" {
		t.Errorf("slug = %q", s.Run.Slug)
	}
	if want := "docs/gaffer/2026-11-23-GH-7-add-a-calculator"; s.Run.ExecDir != want {
		t.Errorf("exec dir = %q, want %q", s.Run.ExecDir, want)
	}
	if s.Config.Limits != DefaultLimits() {
		t.Errorf("limits = %+v, want defaults", s.Config.Limits)
	}
	if s.Status != RunRunning {
		t.Errorf("status = %v", s.Status)
	}
	// Without a tracker id the run id's suffix keeps two runs of one goal
	// on one day apart.
	var dirs []string
	for _, id := range []string{"r-20261123-3b71eb", "r-20261123-c0ffee"} {
		r, err := NewRun(RunInfo{ID: id, Goal: "Add a calculator", CreatedAt: time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)}, RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, r.Run.ExecDir)
	}
	if dirs[0] != "docs/gaffer/2026-11-23-3b71eb-add-a-calculator" || dirs[1] != "docs/gaffer/2026-11-23-c0ffee-add-a-calculator" {
		t.Errorf("exec dirs without a tracker id = %q", dirs)
	}
	// Given values are kept, never recomputed.
	kept, err := NewRun(RunInfo{ID: "r", Goal: "g", Slug: "mine", ExecDir: "docs/gaffer/x", CreatedAt: time.Unix(1, 0)}, RunConfig{})
	if err != nil || kept.Run.Slug != "mine" || kept.Run.ExecDir != "docs/gaffer/x" {
		t.Errorf("NewRun with slug and dir = %+v, %v", kept.Run, err)
	}
	for _, bad := range []RunInfo{{Goal: "g", CreatedAt: time.Unix(1, 0)}, {ID: "r"}} {
		if _, err := NewRun(bad, RunConfig{}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewRun(%+v) error = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	l, err := Limits{MaxPhaseAttempts: 4}.Validate()
	if err != nil || l != (Limits{MaxTaskReviewIterations: 5, MaxPhaseAttempts: 4, MaxPlanRevisions: 3}) {
		t.Errorf("Validate = %+v, %v", l, err)
	}
	_, err = Limits{MaxPlanRevisions: -1}.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "max_plan_revisions") {
		t.Errorf("negative limit: %v", err)
	}
	if _, err := (RunConfig{Pace: -time.Second}).Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative pace: %v", err)
	}
}

func mustEncode(t *testing.T, s ExecutionState) []byte {
	t.Helper()
	b, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// calls makes each call of a transition in transitions write values the
// others do not, so that two that wrote into one shared array would be
// told apart.
var calls int

// transitions are every exported transition.
var transitions = map[string]func(ExecutionState) (ExecutionState, error){
	"WithPlan":         func(s ExecutionState) (ExecutionState, error) { return s.WithPlan(s.Plan), nil },
	"WithPlanRevision": func(s ExecutionState) (ExecutionState, error) { return s.WithPlanRevision(), nil },
	"WithStatus":       func(s ExecutionState) (ExecutionState, error) { return s.WithStatus(RunHalted), nil },
	"WithError": func(s ExecutionState) (ExecutionState, error) {
		calls++
		return s.WithError(fmt.Sprint("again ", calls)), nil
	},
	"WithApproval": func(s ExecutionState) (ExecutionState, error) { return s.WithApproval(Approval{}), nil },
	"WithUsage": func(s ExecutionState) (ExecutionState, error) {
		calls++
		return s.WithUsage("developer", Usage{InputTokens: calls}), nil
	},
	"WithNotice": func(s ExecutionState) (ExecutionState, error) {
		calls++
		return s.WithNotice(NoticeFailed, time.Unix(int64(calls), 0).UTC(), "t", "b"), nil
	},
	"WithPhaseState": func(s ExecutionState) (ExecutionState, error) {
		ps, err := s.PhaseState(0)
		if err != nil {
			return ExecutionState{}, err
		}
		calls++
		ps.Status, ps.Attempt = PhaseCompleted, calls
		if len(ps.Untracked) > 0 && ps.Review != nil {
			ps.Untracked[0] = "changed"      // ps is a deep copy: s is not changed
			ps.Review.Items[0].Text = "done" // nor through the review
		}
		if len(ps.Lanes) > 0 {
			ps.Lanes[0].Tasks[0], ps.Lanes[0].Conflict[0] = "zz", "zz" // nor through the lanes
			ps = ps.WithIteration(calls).WithoutSessions()
		}
		return s.WithPhaseState(ps)
	},
}

// sharingSample is sample with notifications on, a second phase's state
// and errors with room to spare in their array, so that a transition
// that appended in place would write into memory its input sees.
func sharingSample(t *testing.T) ExecutionState {
	t.Helper()
	s := sample(t)
	s.Config.Notify = &NotifyConfig{Events: []string{NoticeFailed}}
	s, err := s.WithPhaseState(PhaseState{Index: 1, Status: PhasePending, Written: map[string]string{"a.go": "h"},
		GitSettings: map[string]string{"config": "g"}, Tasks: []TaskState{{TaskID: "2"}}})
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithNotice(NoticeFailed, time.Unix(0, 0).UTC(), "first", "")
	s.Errors = append(make([]string, 0, 8), s.Errors...)
	s.Outbox.Entries = append(make([]Notice, 0, 8), s.Outbox.Entries...)
	return s
}

// TestTransitionsDoNotMutate runs every exported transition on a full
// state and checks, through its encoding, that the input is unchanged:
// after the transition, after further transitions of its result, and
// after a second transition of the same input (two steps taken from one
// state must not see each other, though they share what neither changed).
func TestTransitionsDoNotMutate(t *testing.T) {
	for name, tr := range transitions {
		t.Run(name, func(t *testing.T) {
			in := sharingSample(t)
			before := mustEncode(t, in)
			out, err := tr(in)
			if err != nil {
				t.Fatal(err)
			}
			if after := mustEncode(t, in); !bytes.Equal(before, after) {
				t.Fatalf("%s changed its input:\n%s\nbecame\n%s", name, before, after)
			}
			outBytes := mustEncode(t, out)
			for other, tr2 := range transitions {
				if _, err := tr2(out); err != nil {
					t.Fatal(err)
				}
				if _, err := tr2(in); err != nil {
					t.Fatal(err)
				}
				if after := mustEncode(t, in); !bytes.Equal(before, after) {
					t.Fatalf("%s after %s changed the first one's input:\n%s\nbecame\n%s", other, name, before, after)
				}
				if after := mustEncode(t, out); !bytes.Equal(outBytes, after) {
					t.Fatalf("%s of %s's input changed %s's result:\n%s\nbecame\n%s", other, name, name, outBytes, after)
				}
			}
		})
	}
}

// TestCloneSharesNothing changes a deep copy everywhere it can, in
// place, and checks that the original is unchanged; and so for a copy of
// one phase's state.
func TestCloneSharesNothing(t *testing.T) {
	in := sharingSample(t)
	before := mustEncode(t, in)
	out := in.Clone()
	scribble(&out)
	if after := mustEncode(t, in); !bytes.Equal(before, after) {
		t.Fatalf("changing a Clone changed the original:\n%s\nbecame\n%s", before, after)
	}
	for i := range in.Progress.Phases {
		ps, err := in.PhaseState(i)
		if err != nil {
			t.Fatal(err)
		}
		one := ExecutionState{Progress: Progress{Phases: []PhaseState{ps}}}
		scribble(&one)
	}
	if after := mustEncode(t, in); !bytes.Equal(before, after) {
		t.Fatalf("changing a PhaseState changed the state:\n%s\nbecame\n%s", before, after)
	}
}

// TestWithPhaseStateSharesTheRest checks that a step's update copies only
// the phase it changes: the plan and the other phases' contents are the
// input's own (the same arrays and maps), so an update costs the phase,
// not the plan.
func TestWithPhaseStateSharesTheRest(t *testing.T) {
	in := sharingSample(t)
	ps, err := in.PhaseState(0)
	if err != nil {
		t.Fatal(err)
	}
	ps.Status = PhaseCompleted
	out, err := in.WithPhaseState(ps)
	if err != nil {
		t.Fatal(err)
	}
	if out.Progress.Phases[0].Status != PhaseCompleted || in.Progress.Phases[0].Status == PhaseCompleted {
		t.Fatalf("phase 1 status: %s in the result, %s in the input", out.Progress.Phases[0].Status, in.Progress.Phases[0].Status)
	}
	if &out.Plan.Tasks[0] != &in.Plan.Tasks[0] || &out.Plan.Phases[0] != &in.Plan.Phases[0] {
		t.Error("the plan was copied")
	}
	o, i := out.Progress.Phases[1], in.Progress.Phases[1]
	if &o.Tasks[0] != &i.Tasks[0] || reflect.ValueOf(o.Written).UnsafePointer() != reflect.ValueOf(i.Written).UnsafePointer() {
		t.Error("phase 2's state was copied")
	}
	if &out.Progress.Phases[0].Untracked[0] == &in.Progress.Phases[0].Untracked[0] {
		t.Error("phase 1's state is shared with the input")
	}
}

// scribble changes every shared-able part of s in place.
func scribble(s *ExecutionState) {
	for i := range s.Plan.Tasks {
		s.Plan.Tasks[i].DependsOn = append(s.Plan.Tasks[i].DependsOn[:0:0], "zz")
		if len(s.Plan.Tasks[i].Files) > 0 {
			s.Plan.Tasks[i].Files[0] = "zz"
		}
	}
	for i := range s.Plan.Phases {
		s.Plan.Phases[i].TaskIDs[0] = "zz"
	}
	for i := range s.Progress.Phases {
		p := &s.Progress.Phases[i]
		if len(p.Untracked) > 0 {
			p.Untracked[0] = "zz"
		}
		if len(p.Tasks) > 0 {
			p.Tasks[0].Error = "zz"
		}
		if p.Review != nil {
			p.Review.Comments = "zz"
			if len(p.Review.Items) > 0 {
				p.Review.Items[0].Text = "zz"
			}
		}
	}
	for i := range s.Progress.Phases {
		p := &s.Progress.Phases[i]
		for k := range p.Written {
			p.Written[k] = "zz"
		}
		for k := range p.GitSettings {
			p.GitSettings[k] = "zz"
		}
	}
	if s.Usage != nil {
		s.Usage["developer"] = Usage{InputTokens: 999}
	}
	if s.Config.Drivers.Prices != nil {
		s.Config.Drivers.Prices["m"] = Price{Input: 999}
	}
	if len(s.Outbox.Entries) > 0 {
		s.Outbox.Entries[0].Title = "zz"
	}
	for _, a := range s.Config.Drivers.CLIAgents {
		a.Command[0], a.Env["A"], a.PassEnv[0] = "zz", "zz", "zz"
	}
	if len(s.Errors) > 0 {
		s.Errors[0] = "zz"
	}
}

func TestTransitions(t *testing.T) {
	s := sample(t)
	if got := s.WithPlan(s.Plan); len(got.Progress.Phases) != 2 || got.Progress.Phases[1].Tasks[0].TaskID != "2" ||
		got.Progress.Phases[0].Status != PhasePending {
		t.Errorf("WithPlan progress = %+v", got.Progress)
	}
	if s.Progress.CurrentPhase() != 0 || s.ReviewIteration() != 1 || s.LastPhase() {
		t.Errorf("phase 1 under way: current %d, review iteration %d, last %v", s.Progress.CurrentPhase(), s.ReviewIteration(), s.LastPhase())
	}
	ps, _ := s.PhaseState(1)
	ps.Attempt, ps.Status = 1, PhaseRunning
	n, _ := s.WithPhaseState(ps)
	if n.Progress.CurrentPhase() != 1 || n.ReviewIteration() != 0 || !n.LastPhase() {
		t.Errorf("phase 2 started: current %d, review iteration %d, last %v", n.Progress.CurrentPhase(), n.ReviewIteration(), n.LastPhase())
	}
	r := s.WithPlanRevision()
	if r.Progress.PlanRevision != 1 || r.Approval.Decision != DecisionNone {
		t.Errorf("WithPlanRevision = %+v %+v", r.Progress, r.Approval)
	}
	u := s.WithUsage("reviewer", Usage{OutputTokens: 5, CostUSD: 0.25}).WithUsage("developer", Usage{InputTokens: 1})
	if tot := u.TotalUsage(); tot != (Usage{InputTokens: 11, OutputTokens: 5, CostUSD: 0.75}) {
		t.Errorf("TotalUsage = %+v", tot)
	}
	if _, err := s.WithPhaseState(PhaseState{Index: 2}); !errors.Is(err, ErrNoPhase) {
		t.Errorf("WithPhaseState(2) error = %v", err)
	}
	if _, err := s.PhaseState(-1); !errors.Is(err, ErrNoPhase) {
		t.Errorf("PhaseState(-1) error = %v", err)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	s := sample(t)
	b := mustEncode(t, s)
	if !bytes.HasPrefix(b, []byte("{\n  \"schema_version\": 2,")) {
		t.Errorf("encoding does not start with the schema version:\n%s", b)
	}
	for _, want := range []string{`"status": "retrying"`, `"verdict": "IMPLEMENT"`, `"decision": "approved"`, `"mode": "phased"`, `"type": "impl"`, `"lanes": [`, `"session_id": "sess-1"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("encoding lacks %s:\n%s", want, b)
		}
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
	}
	if again := mustEncode(t, got); !bytes.Equal(again, b) {
		t.Errorf("re-encoding differs")
	}
}

func TestDecodeRejects(t *testing.T) {
	good := mustEncode(t, sample(t))
	var m map[string]any
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	with := func(f func(map[string]any)) []byte {
		var c map[string]any
		_ = json.Unmarshal(good, &c)
		f(c)
		b, _ := json.Marshal(c)
		return b
	}
	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"newer", with(func(c map[string]any) { c["schema_version"] = 3 }), ErrSchemaVersion, "newer"},
		{"zero", with(func(c map[string]any) { c["schema_version"] = 0 }), ErrSchemaVersion, "0"},
		{"missing", with(func(c map[string]any) { delete(c, "schema_version") }), ErrDecode, "schema_version"},
		{"unknown top field", with(func(c map[string]any) { c["colour"] = "red" }), ErrDecode, `"colour"`},
		{"unknown nested field", with(func(c map[string]any) { c["run"].(map[string]any)["extra"] = 1 }), ErrDecode, `"extra"`},
		{"unknown status", with(func(c map[string]any) { c["status"] = "sleeping" }), ErrDecode, "sleeping"},
		{"unknown lane status", with(func(c map[string]any) {
			c["progress"].(map[string]any)["phases"].([]any)[0].(map[string]any)["lanes"].([]any)[0].(map[string]any)["status"] = "idle"
		}), ErrDecode, "idle"},
		{"schema 2 with a cursor", with(func(c map[string]any) { c["progress"].(map[string]any)["current_phase"] = 0 }), ErrDecode, "current_phase"},
		{"unknown verdict", with(func(c map[string]any) {
			c["progress"].(map[string]any)["phases"].([]any)[0].(map[string]any)["review"].(map[string]any)["items"].([]any)[0].(map[string]any)["verdict"] = "MAYBE"
		}), ErrDecode, "MAYBE"},
		{"trailing", append(append([]byte{}, good...), []byte("{}")...), ErrDecode, "after"},
		{"not json", []byte("nope"), ErrDecode, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.data)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Decode error = %v, want %v mentioning %q", err, c.want, c.msg)
			}
		})
	}
}

func TestEnums(t *testing.T) {
	if RunAwaitingApproval.String() != "awaiting_approval" || PhaseRetrying.String() != "retrying" ||
		TypeRefactor.String() != "refactor" || ModePhased.String() != "phased" || RunStatus(42).String() != "RunStatus(42)" {
		t.Error("String names wrong")
	}
	if _, err := json.Marshal(RunStatus(42)); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("marshal of unnamed status: %v", err)
	}
	for _, s := range []RunStatus{RunCompleted, RunFailed, RunHalted, RunRejected, RunCancelled} {
		if !s.Terminal() {
			t.Errorf("%v not terminal", s)
		}
	}
	if RunRunning.Terminal() || RunAwaitingApproval.Terminal() {
		t.Error("running or awaiting approval is terminal")
	}
}

func TestRunSuffix(t *testing.T) {
	for id, want := range map[string]string{
		"r-20261123-3b71eb": "3b71eb", "r-test-1": "test-1", "r-1": "1", "r": "r", "r-": "r-",
		"custom": "custom", "r-2026112-x": "2026112-x", "r-2026x123-ab": "2026x123-ab",
	} {
		if got := RunSuffix(id); got != want {
			t.Errorf("RunSuffix(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestAgentsRole(t *testing.T) {
	a := Agents{
		Architect: AgentConfig{Driver: "llm", Model: "a"},
		Developer: AgentConfig{Driver: "cli", Model: "d"},
		Reviewer:  AgentConfig{Driver: "llm", Model: "r"},
		Evaluator: AgentConfig{Driver: "script"},
	}
	for role, want := range map[string]AgentConfig{
		"architect": a.Architect, "developer": a.Developer, "reviewer": a.Reviewer,
		"evaluator": a.Evaluator, "janitor": {},
	} {
		if got := a.Role(role); got != want {
			t.Errorf("Role(%q) = %+v, want %+v", role, got, want)
		}
	}
}
