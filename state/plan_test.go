package state

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func readPlan(t *testing.T, path string, opts ...ParseOption) (Plan, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ParsePlan(filepath.Base(path), string(b), opts...)
}

func phaseIDs(p Plan) [][]string {
	var out [][]string
	for i, ph := range p.Phases {
		if ph.Index != i {
			return [][]string{{"bad index"}}
		}
		out = append(out, ph.TaskIDs)
	}
	return out
}

func TestParseDemoPlan(t *testing.T) {
	p, err := readPlan(t, "../examples/demo/plan.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"1a", "1b"}, {"2a", "2b"}, {"3"}, {"4"}}; !reflect.DeepEqual(phaseIDs(p), want) {
		t.Errorf("phases = %v, want %v", phaseIDs(p), want)
	}
	if p.Mode != ModePhased {
		t.Errorf("mode = %v", p.Mode)
	}
	if !strings.HasPrefix(p.Preamble, "# Plan: a calculator") || !strings.HasSuffix(p.Preamble, "implementation tasks make them pass.") {
		t.Errorf("preamble = %q", p.Preamble)
	}
	want := Task{
		ID: "2b", Title: "Implement Parse", Type: TypeImpl, DependsOn: []string{"1b"}, Files: []string{"parse.go"},
		Description: "Split on spaces, convert both operands with strconv.Atoi and return its error.",
		Line:        28, EndLine: 33,
	}
	if got, _ := p.Task("2b"); !reflect.DeepEqual(got, want) {
		t.Errorf("task 2b =\n%+v, want\n%+v", got, want)
	}
	if got, _ := p.Task("3"); !reflect.DeepEqual(got.DependsOn, []string{"2a", "2b"}) || got.Description != `Eval("7 - 10") is -3; an unknown operator is an error.` {
		t.Errorf("task 3 = %+v", got)
	}
	if got, _ := p.Task("2a"); got.Description != "" {
		t.Errorf("task 2a description = %q, want empty", got.Description)
	}
}

func TestParseSeedExample(t *testing.T) {
	p, err := readPlan(t, "testdata/plans/seed-blog.md")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1a", "1b"}, {"2a", "2b"}, {"3a", "3b"}, {"4a", "4b"}, {"5"}}
	if !reflect.DeepEqual(phaseIDs(p), want) {
		t.Errorf("phases = %v, want %v", phaseIDs(p), want)
	}
}

func TestParseMessyPlan(t *testing.T) {
	p, err := readPlan(t, "testdata/plans/messy-crlf.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Markdown, "\r") {
		t.Error("markdown keeps CR")
	}
	got := make(map[string]Task)
	for _, task := range p.Tasks {
		task.Description = ""
		got[task.ID] = task
	}
	want := map[string]Task{
		"1a": {ID: "1a", Title: "Tests for the token bucket", Type: TypeTest, Files: []string{"limiter/bucket_test.go"}, Line: 8, EndLine: 15},
		"1b": {ID: "1b", Title: "Tests for the middleware", Type: TypeTest, Files: []string{"middleware/limit_test.go", "middleware/testdata/"}, Line: 17, EndLine: 22},
		"2": {ID: "2", Title: "Token bucket and middleware", Type: TypeImpl, DependsOn: []string{"1a", "1b"},
			Files: []string{"limiter/bucket.go", "middleware/limit.go"}, Line: 24, EndLine: 33},
		"3": {ID: "3", Title: "Refactor", Type: TypeRefactor, DependsOn: []string{"2"}, Line: 35, EndLine: 39},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tasks =\n%+v\nwant\n%+v", got, want)
	}
	if want := [][]string{{"1a", "1b"}, {"2"}, {"3"}}; !reflect.DeepEqual(phaseIDs(p), want) {
		t.Errorf("phases = %v, want %v", phaseIDs(p), want)
	}
	if two, _ := p.Task("2"); !strings.Contains(two.Description, "### Task 99: not a task") {
		t.Errorf("a heading inside a code fence was not kept as text: %q", two.Description)
	}
	if one, _ := p.Task("1a"); one.Description != "Cover refill and burst." {
		t.Errorf("1a description = %q", one.Description)
	}
}

func TestParseTaskMode(t *testing.T) {
	p, err := readPlan(t, "testdata/plans/task-mode.md")
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeTask {
		t.Errorf("mode = %v", p.Mode)
	}
	// Document order, not id order.
	if want := [][]string{{"1"}, {"2"}, {"10"}, {"3"}}; !reflect.DeepEqual(phaseIDs(p), want) {
		t.Errorf("phases = %v, want %v", phaseIDs(p), want)
	}
	if ten, _ := p.Task("10"); !reflect.DeepEqual(ten.DependsOn, []string{"2"}) {
		t.Errorf("task 10 depends on %v, want the task before it", ten.DependsOn)
	}
}

func TestParseImplicitDependency(t *testing.T) {
	src := "### Task 1: a\n- type: test\n- depends on: none\n\n### Task 2: b\n- type: impl\n\n### Task 3: c\n- depends on: none\n"
	p, err := ParsePlan("p.md", src)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"1", "3"}, {"2"}}; !reflect.DeepEqual(phaseIDs(p), want) {
		t.Errorf("phases = %v, want %v", phaseIDs(p), want)
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	p, err := readPlan(t, "testdata/plans/bad.md")
	var pe *PlanError
	if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPlan) {
		t.Fatalf("error = %v, want a *PlanError", err)
	}
	want := strings.Join([]string{
		"bad.md:7: task 2 is an impl task with no test task in its dependency chain (write the tests first, or turn the TDD check off)",
		"bad.md:11: dependency cycle: 3 → 4 → 3",
		"bad.md:17: task 4 depends on unknown task 9",
		"bad.md:19: duplicate task id 1 (first used on line 3)",
		`bad.md:24: task 5: unknown type "chore" (want test, impl or refactor)`,
	}, "\n")
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
	if !reflect.DeepEqual(pe.Problems[1].TaskIDs, []string{"3", "4"}) {
		t.Errorf("cycle task ids = %v", pe.Problems[1].TaskIDs)
	}
	if len(p.Tasks) != 6 || p.Phases != nil {
		t.Errorf("partial plan: %d tasks, phases %v", len(p.Tasks), p.Phases)
	}
}

func TestParseTDDCheck(t *testing.T) {
	src := "### Task 1: setup\n- type: refactor\n- depends on: none\n\n### Task 2: impl\n- type: impl\n- depends on: 1\n"
	if _, err := ParsePlan("p.md", src); err == nil || !strings.Contains(err.Error(), "p.md:5: task 2 is an impl task") {
		t.Errorf("error = %v, want the TDD problem", err)
	}
	if _, err := ParsePlan("p.md", src, WithoutTDDCheck()); err != nil {
		t.Errorf("WithoutTDDCheck: %v", err)
	}
	// A test task anywhere up the chain is enough.
	chain := "### Task 1: t\n- type: test\n- depends on: none\n### Task 2: r\n- type: refactor\n- depends on: 1\n### Task 3: i\n- type: impl\n- depends on: 2\n"
	if _, err := ParsePlan("p.md", chain); err != nil {
		t.Errorf("chain through a refactor: %v", err)
	}
	// Plans without types are not checked.
	untyped := "### Task 1: a\n- depends on: none\n### Task 2: b\n- depends on: 1\n"
	if _, err := ParsePlan("p.md", untyped); err != nil {
		t.Errorf("untyped: %v", err)
	}
}

func TestParseEmptyAndOddPlans(t *testing.T) {
	for _, src := range []string{"", "\n  \n\t\n"} {
		_, err := ParsePlan("e.md", src)
		if err == nil || !strings.HasPrefix(err.Error(), "e.md: the plan has no tasks") {
			t.Errorf("ParsePlan(%q) error = %v", src, err)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"### Task 1: a\n- depends on: 1\n", "e.md:1: dependency cycle: 1 → 1"},
		{"### Task 1: a\n- type: test\n- type: impl\n", "e.md:3: task 1 has a second type line"},
		{"### Task 1: a\n- depends on: 1a or maybe\n", `e.md:2: task 1: cannot read "or" as a task id`},
	} {
		if _, err := ParsePlan("e.md", c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePlan(%q) error = %v, want %q", c.src, err, c.want)
		}
	}
}

func TestTaskHeadings(t *testing.T) {
	for _, c := range []struct{ line, id, title string }{
		{"### Task 1: Add", "1", "Add"},
		{"### Task 2a: Add: more", "2a", "Add: more"},
		{"### Task 3.1 — Parse", "3.1", "Parse"},
		{"### Task 4 - Eval", "4", "Eval"},
		{"## Task 5. Dot", "5", "Dot"},
		{"### **Task 6:** Bold", "6", "Bold"},
		{"### Task 7", "7", ""},
		{"### task 8B: upper", "8b", "upper"},
		{"### Task 9:Tight  ", "9", "Tight"},
	} {
		id, title, ok := taskHeading(c.line)
		if !ok || id != c.id || title != c.title {
			t.Errorf("taskHeading(%q) = %q, %q, %v; want %q, %q", c.line, id, title, ok, c.id, c.title)
		}
	}
	for _, line := range []string{"### Tasks", "### Task overview", "Task 1: not a heading", "####### Task 1: seven", "    ### Task 1: code"} {
		if id, _, ok := taskHeading(line); ok {
			t.Errorf("taskHeading(%q) = %q, want no task", line, id)
		}
	}
}

func TestCompareIDs(t *testing.T) {
	sorted := []string{"1", "1a", "1b", "2", "2a", "3", "3.1", "3.2", "3.10", "10", "10a"}
	for i := range sorted {
		for j := range sorted {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareIDs(sorted[i], sorted[j]); got != want {
				t.Errorf("CompareIDs(%q, %q) = %d, want %d", sorted[i], sorted[j], got, want)
			}
		}
	}
}

func TestLayerPhasesErrors(t *testing.T) {
	_, err := LayerPhases([]Task{{ID: "1", DependsOn: []string{"2"}, Line: 1}, {ID: "2", DependsOn: []string{"1"}, Line: 5}})
	if !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), "1 → 2 → 1") {
		t.Errorf("cycle: %v", err)
	}
	if _, err := LayerPhases(nil); !errors.Is(err, ErrInvalidPlan) {
		t.Errorf("empty: %v", err)
	}
}

func TestPhaseContext(t *testing.T) {
	p, err := readPlan(t, "../examples/demo/plan.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := PhaseContext(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{p.Preamble, "### Task 2a: Implement Add and Sub\n- type: impl", "### Task 2b: Implement Parse", "strconv.Atoi"} {
		if !strings.Contains(got, want) {
			t.Errorf("phase context lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"Task 1a", "Task 3", "Task 4", "Eval parses"} {
		if strings.Contains(got, absent) {
			t.Errorf("phase context has %q from another phase:\n%s", absent, got)
		}
	}
	if !strings.HasPrefix(got, "# Plan: a calculator") || strings.Index(got, "Task 2a") > strings.Index(got, "Task 2b") {
		t.Errorf("phase context out of order:\n%s", got)
	}
	if _, err := PhaseContext(p, 4); !errors.Is(err, ErrNoPhase) {
		t.Errorf("phase 4: %v", err)
	}
	// A plan built in code is rendered.
	built := Plan{Tasks: []Task{{ID: "1", Title: "T", Type: TypeTest, Files: []string{"a.go"}, Description: "Do it."}},
		Phases: []Phase{{TaskIDs: []string{"1"}}}}
	if got, _ := PhaseContext(built, 0); got != "### Task 1: T\n- type: test\n- files: a.go\n\nDo it.\n" {
		t.Errorf("rendered context = %q", got)
	}
}

func TestMetaLineVariants(t *testing.T) {
	head := "### Task 1a: a\n- type: test\n- depends on: none\n### Task 1b: b\n- type: test\n- depends on: none\n### Task 2: c\n"
	for _, c := range []struct {
		lines string
		typ   TaskType
		deps  []string
		files []string
	}{
		{"- type: impl\n- depends on: 1a and 1b\n", TypeImpl, []string{"1a", "1b"}, nil},
		{"- **Type:** Impl\n- **Depends on:** 1a\n- **Files:** `a.go`, `b.go`\n", TypeImpl, []string{"1a"}, []string{"a.go", "b.go"}},
		{"**Type**: implementation  \n**Depends On**: Task 1a, Task 1b\n", TypeImpl, []string{"1a", "1b"}, nil},
		{"* kind: refactor\n* deps: [1a, 1b]\n* file: x.go (new)\n", TypeRefactor, []string{"1a", "1b"}, []string{"x.go"}},
		{"- depends_on: 1b; 1a\n- files:\n  - a.go\n  - b.go\n", TypeNone, []string{"1b", "1a"}, []string{"a.go", "b.go"}},
		{"\n\n- type: test\n\n- depends on: 1a & 1b.\n", TypeTest, []string{"1a", "1b"}, nil},
	} {
		p, err := ParsePlan("m.md", head+c.lines+"\nText.\n")
		if err != nil {
			t.Errorf("%q: %v", c.lines, err)
			continue
		}
		got := p.Tasks[2]
		if got.Type != c.typ || !reflect.DeepEqual(got.DependsOn, c.deps) || !reflect.DeepEqual(got.Files, c.files) || got.Description != "Text." {
			t.Errorf("%q: got type %v deps %v files %v description %q", c.lines, got.Type, got.DependsOn, got.Files, got.Description)
		}
	}
}

// The files line is read like the depends-on line: "and", "&" and "+"
// join names, and backquotes around a name are markup.
func TestParseFilesJoinedWithAnd(t *testing.T) {
	plan, err := ParsePlan("plan.md", "### Task 1: t\n- type: test\n- depends on: none\n- files: `x.go` and y_test.go & z.go\n", WithoutTDDCheck())
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Tasks[0].Files
	want := []string{"x.go", "y_test.go", "z.go"}
	if !slices.Equal(got, want) {
		t.Fatalf("files = %q, want %q", got, want)
	}
}

// Seeds 000-002: a plan that says something but has no task headings is
// one task, the whole plan, in one phase.
func TestPlanWithoutTasksIsOneTask(t *testing.T) {
	for _, src := range []string{"# Plan\n\nJust words.\n", "\n\n```\n### Task 1: fenced\n```\n\n"} {
		p, err := ParsePlan("e.md", src)
		if err != nil {
			t.Fatalf("ParsePlan(%q): %v", src, err)
		}
		if !p.Whole || p.Mode != ModeTask || len(p.Tasks) != 1 || len(p.Phases) != 1 || p.Tasks[0].ID != "1" || p.Tasks[0].Title != WholePlanTitle {
			t.Fatalf("ParsePlan(%q) = %+v", src, p)
		}
		ctx, err := PhaseContext(p, 0)
		if err != nil || strings.TrimSpace(ctx) != strings.TrimSpace(src) {
			t.Errorf("the one phase's context is not the whole plan: %q, %v", ctx, err)
		}
	}
}

func TestModeForcesThePlansMode(t *testing.T) {
	typed := "### Task 1: t\n- type: test\n- depends on: none\n### Task 2: u\n- type: test\n- depends on: none\n### Task 3: i\n- type: impl\n- depends on: 1, 2\n"
	p, err := ParsePlan("p.md", typed, WithMode(ExecTask))
	if err != nil || p.Mode != ModeTask || len(p.Phases) != 3 {
		t.Fatalf("mode task: %v, %+v", err, p.Phases)
	}
	if p, err = ParsePlan("p.md", typed); err != nil || p.Mode != ModePhased || len(p.Phases) != 2 {
		t.Fatalf("mode auto: %v, %+v", err, p.Phases)
	}
	plain := "### Task 1: a\n### Task 2: b\n"
	if p, err = ParsePlan("p.md", plain, WithMode(ExecPhased)); err != nil || p.Mode != ModePhased || len(p.Phases) != 2 {
		t.Fatalf("mode phased: %v, %+v", err, p)
	}
	later := "### Task 1: a\n- depends on: 2\n### Task 2: b\n- depends on: none\n"
	if _, err := ParsePlan("p.md", later); err != nil {
		t.Fatalf("auto: %v", err)
	}
	if _, err := ParsePlan("p.md", later, WithMode(ExecTask)); err == nil || !strings.Contains(err.Error(), "p.md:1: task 1 depends on task 2, which comes after it") {
		t.Fatalf("mode task with a later dependency: %v", err)
	}
	for in, want := range map[string]ExecMode{"": ExecAuto, "auto": ExecAuto, "task": ExecTask, "phased": ExecPhased} {
		if got, ok := ParseExecMode(in); !ok || got != want {
			t.Errorf("ParseExecMode(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := ParseExecMode("lanes"); ok {
		t.Error(`ParseExecMode("lanes") accepted`)
	}
}
