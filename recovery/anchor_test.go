package recovery

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

const samplePlanMD = `# Goal: a duration parser

### Task 1: Tests for ParseDuration
- type: test
- depends on: none
- files: parse/duration_test.go

Table tests for "1h", "90m", "1h30m" and bad input.

### Task 2: ParseDuration
- type: impl
- depends on: 1
- files: parse/duration.go, parse/units.go

Parse hours and minutes; reject unknown units with an error naming them.

### Task 3: Docs
- type: refactor
- depends on: 2
- files: README.md

Document the accepted formats.
`

func samplePlan(t testing.TB) state.Plan {
	t.Helper()
	p, err := state.ParsePlan("plan.md", samplePlanMD)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// anchorOf is the anchor of phase index of the plan md, read as the file
// name.
func anchorOf(t *testing.T, name, md string, index int) Anchor {
	t.Helper()
	plan, err := state.ParsePlan(name, md)
	if err != nil {
		t.Fatal(err)
	}
	a, err := FreezeAnchor(plan, index)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// revise returns the tasks of phase index of the plan, changed by edit.
func revise(t *testing.T, plan state.Plan, index int, edit func([]state.Task) []state.Task) []state.Task {
	var ts []state.Task
	for _, id := range plan.Phases[index].TaskIDs {
		i := slices.IndexFunc(plan.Tasks, func(x state.Task) bool { return x.ID == id })
		tk := plan.Tasks[i]
		tk.Files = slices.Clone(tk.Files)
		ts = append(ts, tk)
	}
	return edit(ts)
}

func TestFreezeAnchor(t *testing.T) {
	plan := samplePlan(t)
	a, err := FreezeAnchor(plan, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tasks) != 1 || a.Tasks[0].ID != "2" || !slices.Equal(a.Tasks[0].Files, []string{"parse/duration.go", "parse/units.go"}) || len(a.Hash) != 64 {
		t.Fatalf("anchor = %+v", a)
	}
	if err := a.Verify(); err != nil {
		t.Fatal(err)
	}
	b, _ := FreezeAnchor(plan, 1)
	if b.Hash != a.Hash || b.Text() != a.Text() {
		t.Error("freezing is not deterministic")
	}
	want := "### Task 2: ParseDuration\n- type: impl\n- files: parse/duration.go, parse/units.go\n\nParse hours and minutes; reject unknown units with an error naming them.\n"
	if a.Text() != want {
		t.Errorf("Text =\n%s\nwant\n%s", a.Text(), want)
	}
	tampered := a.clone()
	tampered.Tasks[0].Body = "Parse hours only."
	if err := tampered.Verify(); !errors.Is(err, ErrAnchorTampered) {
		t.Errorf("tampered anchor: %v", err)
	}
	if _, err := FreezeAnchor(plan, 7); !errors.Is(err, state.ErrNoPhase) {
		t.Errorf("phase outside the plan: %v", err)
	}
	broken := plan
	broken.Phases = []state.Phase{{Index: 0, TaskIDs: []string{"9"}}}
	if _, err := FreezeAnchor(broken, 0); !errors.Is(err, ErrNoTask) {
		t.Errorf("unknown task: %v", err)
	}
}

func TestCheckRevision(t *testing.T) {
	plan := samplePlan(t)
	cases := []struct {
		name     string
		phase    int
		edit     func([]state.Task) []state.Task
		approach string
		want     []string // substrings, one per expected reason; none: accepted
	}{
		{"same tasks, new approach", 1, func(ts []state.Task) []state.Task {
			ts[0].Description = "Use a table of unit multipliers instead of a switch; reject unknown units with an error naming them."
			return ts
		}, "Replace the hand-written scanner with strconv and a unit table.", nil},
		{"files reordered and a file added", 1, func(ts []state.Task) []state.Task {
			ts[0].Files = []string{"parse/units.go", "parse/duration.go", "parse/scan.go"}
			return ts
		}, "", nil},
		{"task dropped", 1, func([]state.Task) []state.Task { return nil }, "", []string{"file parse/duration.go is dropped", "file parse/units.go is dropped",
			"name ParseDuration that task 2 names is no longer required"}},
		{"task added", 1, func(ts []state.Task) []state.Task {
			return append(ts, state.Task{ID: "2b", Title: "Extra", Type: state.TypeRefactor})
		}, "", nil},
		{"task added without a type", 1, func(ts []state.Task) []state.Task {
			return append(ts, state.Task{ID: "2b", Title: "Extra"})
		}, "", []string{"task 2b (Extra) has no type"}},
		{"file dropped", 1, func(ts []state.Task) []state.Task {
			ts[0].Files = []string{"parse/duration.go"}
			return ts
		}, "", []string{"file parse/units.go is dropped"}},
		{"test task turned into impl", 0, func(ts []state.Task) []state.Task {
			ts[0].Type = state.TypeImpl
			return ts
		}, "", []string{"no longer a test task"}},
		{"type removed", 1, func(ts []state.Task) []state.Task {
			ts[0].Type = state.TypeNone
			return ts
		}, "", []string{"lost its type"}},
		{"stub and TODO added", 1, func(ts []state.Task) []state.Task {
			ts[0].Description = "Stub ParseDuration for now; TODO: minutes."
			return ts
		}, "", []string{`"stub"`, `"TODO"`, `"Stub ParseDuration for now" puts off or weakens ParseDuration`}},
		{"only and skip in the approach", 0, nil, "Only test hours; skip the bad-input cases.", []string{`"Only test hours" puts off or weakens tests`, `"skip the bad-input cases" puts off or weakens tests`}},
		{"mock and placeholder in a title", 1, func(ts []state.Task) []state.Task {
			ts[0].Title = "Placeholder ParseDuration with mocked units"
			return ts
		}, "", []string{`"placeholder"`, `"Placeholder ParseDuration with mocked units" puts off or weakens ParseDuration`}},
		{"an innocent skip", 1, nil, "Skip the slow rebuild between attempts by caching the module download.", nil},
		{"an innocent only", 1, nil, "Touch only the scanner; keep the unit table as it is.", nil},
		{"a criterion dropped", 0, func(ts []state.Task) []state.Task {
			ts[0].Description = `Table tests for "1h", "90m" and bad input.`
			return ts
		}, "", []string{`acceptance criterion 1h30m that task 1 names is no longer required`}},
		{"the test deferred in the approach", 0, nil, "Write the 1h30m case later, once hours work.", []string{`puts off or weakens 1h30m, tests`}},
		{"word already in the anchor is fine", 1, func(ts []state.Task) []state.Task {
			ts[0].Description = "Reject unknown units with an error naming them; parse hours and minutes."
			return ts
		}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := FreezeAnchor(plan, c.phase)
			if err != nil {
				t.Fatal(err)
			}
			edit := c.edit
			if edit == nil {
				edit = func(ts []state.Task) []state.Task { return ts }
			}
			got := CheckRevision(a, revise(t, plan, c.phase, edit), c.approach)
			checkReasons(t, got, c.want)
		})
	}
}

func TestCheckRevisionKeepsWordsTheAnchorHad(t *testing.T) {
	md := "### Task 1: Skip hidden files only\n- files: walk.go\n\nSkip dot files; only regular files count.\n"
	a := anchorOf(t, "p.md", md, 0)
	rev := []state.Task{{ID: "1", Title: "Skip hidden files only", Files: []string{"walk.go"}, Description: "Use filepath.WalkDir; skip dot files, only regular files count."}}
	if got := CheckRevision(a, rev, ""); got != nil {
		t.Errorf("reasons = %q, want none", got)
	}
	// A skip that names nothing the goal requires is not narrowing.
	rev[0].Description += " Skip symlinks too."
	if got := CheckRevision(a, rev, ""); got != nil {
		t.Errorf("an innocent third skip: reasons = %q", got)
	}
}

const calcPlanMD = `# Goal: a calculator

### Task 1: Tests for Add and Sub
- type: test
- depends on: none
- files: calc/calc_test.go

Table tests for Add and Sub, run with ` + "`go test ./calc/`" + `.

### Task 2: Implement Add and Sub
- type: impl
- depends on: 1
- files: calc/calc.go

Implement Add and Sub over int64; Sub(a, b) returns a - b.
`

// The goal names Add and Sub: a revision that keeps the ids, types and
// files but applies only Add, or defers subtraction, narrows it.
func TestCheckRevisionReadsTheGoal(t *testing.T) {
	a := anchorOf(t, "calc.md", calcPlanMD, 1) // Add and Sub
	got := RequiredOf(a)
	var names []string
	for _, r := range got {
		names = append(names, r.Kind+":"+r.Text)
	}
	if want := []string{"name:Add", "name:Sub", "file:calc/calc.go"}; !slices.Equal(names[:min(len(names), 2)], want[:2]) {
		t.Fatalf("RequiredOf = %q, want Add and Sub first", names)
	}
	task := func(desc string) []state.Task {
		return []state.Task{{ID: "2", Title: "Implement Add and Sub", Type: state.TypeImpl, Files: []string{"calc/calc.go"}, Description: desc}}
	}
	for _, c := range []struct {
		name, title, desc, approach string
		want                        []string
	}{
		{"add applies, subtraction deferred", "Implement Add", "Add applies; subtraction is deferred.", "Get Add right first.",
			[]string{"name Sub that task 2 names is no longer required", `"subtraction is deferred" puts off or weakens Sub`}},
		{"everything kept, in other words", "Implement Add and Sub", "Add and Sub over int64 with overflow checks; Sub(a, b) is a - b.", "Use math/bits for the overflow checks.", nil},
		{"kept but put off in the approach", "Implement Add and Sub", "Implement Add and Sub over int64.", "Do Add now; Sub can wait for a follow-up.",
			[]string{`"Sub can wait for a follow-up" puts off or weakens Sub`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := task(c.desc)
			ts[0].Title = c.title
			got := CheckRevision(a, ts, c.approach)
			checkReasons(t, got, c.want)
		})
	}
}

func TestConstraintCarriesTheAnchorVerbatim(t *testing.T) {
	a, err := FreezeAnchor(samplePlan(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := a.Constraint()
	if !strings.Contains(c, "<goal-anchor>\n"+a.Text()+"</goal-anchor>\n") || !strings.Contains(c, a.Hash[:12]) || !strings.Contains(c, "phase 1") {
		t.Errorf("constraint lacks the anchor:\n%s", c)
	}
}

// Deferral is found by meaning: every paraphrase of "later",
// "separately", "follow-up", "out of scope for now" and "another plan"
// that names Sub is refused; sentences that put off nothing the goal
// requires are not.
func TestDeferralByMeaning(t *testing.T) {
	a := anchorOf(t, "calc.md", calcPlanMD, 1) // Add and Sub
	keep := []state.Task{{ID: "2", Title: "Implement Add and Sub", Type: state.TypeImpl, Files: []string{"calc/calc.go"}, Description: "Implement Add and Sub over int64."}}
	for _, approach := range []string{
		"Sub lands in the next milestone.",
		"Sub ships in a later release.",
		"Sub will be handled separately.",
		"Sub goes into another plan.",
		"Sub is a follow-up.",
		"Sub is out of scope for now.",
		"Sub is not part of this phase.",
		"We will not implement Sub in this phase.",
		"Sub can wait until Add is stable.",
		"Sub comes afterwards.",
		"Sub is parked in the backlog.",
		"Sub is tracked in a separate ticket.",
		"Leave Sub for a future iteration.",
	} {
		got := CheckRevision(a, keep, approach)
		if len(got) != 1 || !strings.Contains(got[0], "puts off or weakens") || !strings.Contains(got[0], "Sub (") {
			t.Errorf("%q: reasons = %q, want it refused for putting off Sub", approach, got)
		}
	}
	for _, approach := range []string{
		"Skip the slow rebuild between attempts by caching the module download.",
		"Write Sub with math/bits so that overflow is caught.",
		"Implement Add first, then Sub, in this phase.",
		"Keep the documentation for a later phase of the plan.",
	} {
		if got := CheckRevision(a, keep, approach); got != nil {
			t.Errorf("%q: reasons = %q, want none", approach, got)
		}
	}
	// Better than any word list: the tasks must promise Sub. A revision
	// whose tasks no longer name it is refused whatever its approach says
	// — here, words no list has.
	addOnly := []state.Task{{ID: "2", Title: "Implement Add", Type: state.TypeImpl, Files: []string{"calc/calc.go"}, Description: "Implement Add over int64."}}
	for _, approach := range []string{"Sub arrives with the quarterly refresh.", "Get Add right first."} {
		got := CheckRevision(a, addOnly, approach)
		if !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "name Sub that task 2 names is no longer required") }) {
			t.Errorf("%q: reasons = %q, want Sub no longer required", approach, got)
		}
	}
}

// A split, a merge, a reorder and new ids are not a narrowing: accepted
// while every required name, file and test is still delivered; refused
// for what they drop or put off. The anchor is one phase of two tasks,
// a test and its impl (a layer of a plan run with the TDD check off).
func TestRestructuringIsNotNarrowing(t *testing.T) {
	a := Anchor{Tasks: []AnchorTask{
		{ID: "1", Title: "Tests for Add and Sub", Type: state.TypeTest, Files: []string{"calc/calc_test.go"},
			Body: "Table tests for Add and Sub, run with `go test ./calc/`."},
		{ID: "2", Title: "Implement Add and Sub", Type: state.TypeImpl, Files: []string{"calc/calc.go"},
			Body: "Implement Add and Sub over int64; Sub(a, b) returns a - b."},
	}}
	a.Hash = anchorHash(a.Tasks)
	test := state.Task{ID: "1", Title: "Tests for Add and Sub", Type: state.TypeTest, Files: []string{"calc/calc_test.go"},
		Description: "Table tests for Add and Sub, run with `go test ./calc/`."}
	impl := func(id, title, desc string) state.Task {
		return state.Task{ID: id, Title: title, Type: state.TypeImpl, Files: []string{"calc/calc.go"}, Description: desc}
	}
	for _, c := range []struct {
		name  string
		tasks []state.Task
		want  []string
	}{
		{"split in two", []state.Task{test, impl("2a", "Implement Add", "Implement Add over int64."), impl("2b", "Implement Sub", "Implement Sub over int64; Sub(a, b) returns a - b.")}, nil},
		{"reordered", []state.Task{impl("2", "Implement Add and Sub", "Implement Add and Sub over int64; Sub(a, b) returns a - b."), test}, nil},
		{"tests split by operation", []state.Task{
			{ID: "1a", Title: "Tests for Add", Type: state.TypeTest, Files: []string{"calc/calc_test.go"}, Description: "Table tests for Add, run with `go test ./calc/`."},
			{ID: "1b", Title: "Tests for Sub", Type: state.TypeTest, Files: []string{"calc/calc_test.go"}, Description: "Table tests for Sub."},
			impl("2", "Implement Add and Sub", "Implement Add and Sub over int64; Sub(a, b) returns a - b.")}, nil},
		{"split that drops Sub", []state.Task{test, impl("2a", "Implement Add", "Implement Add over int64.")},
			[]string{"name Sub that task 2 names is promised by no revised non-test task"}},
		{"split that defers Sub", []state.Task{test, impl("2a", "Implement Add", "Implement Add over int64."), impl("2b", "Sub", "Sub lands in the next milestone.")},
			[]string{`"Sub lands in the next milestone" puts off or weakens Sub`}},
		{"tests merged into the impl", []state.Task{impl("2", "Implement and test Add and Sub", "Implement Add and Sub with table tests, run with `go test ./calc/`; Sub(a, b) returns a - b. Files calc/calc_test.go too.")},
			[]string{"file calc/calc_test.go is dropped", "no test task"}},
		{"the test file moved to an impl task", []state.Task{impl("2", "Implement Add and Sub", "Implement Add and Sub over int64 with table tests run with `go test ./calc/`; Sub(a, b) returns a - b."),
			{ID: "3", Title: "More", Type: state.TypeRefactor, Files: []string{"calc/calc_test.go"}}},
			[]string{"test file calc/calc_test.go is in no revised test task"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckRevision(a, c.tasks, "Restructure the phase.")
			checkReasons(t, got, c.want)
		})
	}
}
