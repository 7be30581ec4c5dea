package recovery

import (
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// asTasks returns the anchor's tasks as a revision that changes nothing.
func asTasks(a Anchor) []state.Task {
	var ts []state.Task
	for _, t := range a.Tasks {
		ts = append(ts, state.Task{ID: t.ID, Title: t.Title, Type: t.Type, Files: slices.Clone(t.Files), Description: t.Body})
	}
	return ts
}

const goTestBefore = `package calc

import "testing"

func TestAdd(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b, want int64
	}{
		{"zero", 0, 0, 0},
		{"one", 1, 2, 3},
		{"negative", -1, -2, -3},
	} {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("%s: Add = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSub(t *testing.T) {
	if got := Sub(3, 1); got != 2 {
		t.Fatalf("Sub = %d", got)
	}
}
`

// A phase's diff that weakens its tests is narrowing, whatever its prose
// says; one that keeps or adds tests, or touches no test, is not.
func TestCheckTestChanges(t *testing.T) {
	repl := func(old, new string) string { return strings.Replace(goTestBefore, old, new, 1) }
	for _, c := range []struct {
		name    string
		changes []FileChange
		want    []string // substrings, one per reason
	}{
		{"assertion deleted", []FileChange{{"calc/calc_test.go", goTestBefore, repl("\t\tt.Fatalf(\"Sub = %d\", got)\n", "")}},
			[]string{"assertions go from 2 to 1"}},
		{"t.Skip added", []FileChange{{"calc/calc_test.go", goTestBefore, repl("func TestSub(t *testing.T) {\n", "func TestSub(t *testing.T) {\n\tt.Skip(\"flaky\")\n")}},
			[]string{"1 test skip(s) added"}},
		{"case commented out", []FileChange{{"calc/calc_test.go", goTestBefore, repl("\t\t{\"negative\", -1, -2, -3},\n", "\t\t// {\"negative\", -1, -2, -3},\n")}},
			[]string{"table cases go from 3 to 2", "1 test line(s) commented out"}},
		{"test function removed", []FileChange{{"calc/calc_test.go", goTestBefore, goTestBefore[:strings.Index(goTestBefore, "func TestSub")]}},
			[]string{"test functions go from 2 to 1", "assertions go from 2 to 1"}},
		{"test file deleted", []FileChange{{"calc/calc_test.go", goTestBefore, ""}}, []string{"the test file is deleted"}},
		{"xit and xdescribe", []FileChange{{"web/app.test.js",
			"describe('app', () => {\n  it('adds', () => { expect(add(1, 2)).toBe(3) })\n})\n",
			"xdescribe('app', () => {\n  xit('adds', () => { expect(add(1, 2)).toBe(3) })\n})\n"}},
			[]string{"test functions go from 1 to 0", "2 test skip(s) added"}},
		{"pytest skip", []FileChange{{"tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n",
			"@pytest.mark.skip(reason=\"later\")\ndef test_add():\n    assert add(1, 2) == 3\n"}}, []string{"1 test skip(s) added"}},
		{"a case added", []FileChange{{"calc/calc_test.go", goTestBefore, repl("\t\t{\"zero\", 0, 0, 0},\n", "\t\t{\"zero\", 0, 0, 0},\n\t\t{\"big\", 1 << 40, 1, 1<<40 + 1},\n")}}, nil},
		{"assertion reworded", []FileChange{{"calc/calc_test.go", goTestBefore, repl(`t.Fatalf("Sub = %d", got)`, `t.Fatalf("Sub(3, 1) = %d, want 2", got)`)}}, nil},
		{"not a test file", []FileChange{{"calc/calc.go", "assert(x)\nassert(y)\n", ""}}, nil},
		{"a new test file", []FileChange{{"calc/more_test.go", "", "func TestMore(t *testing.T) { t.Skip() }\n"}}, []string{"1 test skip(s) added"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckTestChanges(c.changes)
			checkReasons(t, got, c.want)
		})
	}
}

func TestIsTestFile(t *testing.T) {
	for p, want := range map[string]bool{"a/b_test.go": true, "test_x.py": true, "x_test.py": true, "src/a.spec.ts": true, "a.test.js": true,
		"tests/helpers.py": true, "__tests__/a.js": true, "FooTest.java": true, "spec/a_spec.rb": true,
		"calc.go": false, "testdata.go": false, "contest.py": false, "docs/testing.md": false} {
		if got := IsTestFile(p); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}

// FuzzNarrowing checks that the meaning checks never panic, that a file
// left as it was is never narrowing, and that a revision that repeats its
// anchor word for word is accepted.
func FuzzNarrowing(f *testing.F) {
	f.Add(goTestBefore, "Add applies; subtraction is deferred.", calcPlanMD)
	f.Add("it('x', () => {})", "skip the slow rebuild", samplePlanMD)
	f.Add("", "`go test ./...` later", "### Task 1: `x y` \"q\" a/b.go Foo()\n")
	f.Fuzz(func(t *testing.T, test, approach, body string) {
		if got := CheckTestChanges([]FileChange{{"x_test.go", test, test}}); got != nil {
			t.Fatalf("an unchanged file narrows: %q", got)
		}
		CheckTestChanges([]FileChange{{"x_test.go", test, approach}, {"y_test.go", approach, ""}})
		a := Anchor{Tasks: []AnchorTask{{ID: "1", Title: "T", Body: body}}}
		a.Hash = anchorHash(a.Tasks)
		RequiredOf(a)
		CheckRevision(a, nil, approach)
		// The anchor's own text, as the revision, names everything the
		// anchor does and adds no sentence of its own.
		if got := CheckRevision(a, asTasks(a), ""); got != nil {
			t.Fatalf("the anchor itself narrows %q: %q", body, got)
		}
	})
}
