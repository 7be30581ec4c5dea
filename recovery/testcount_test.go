package recovery

import (
	"strings"
	"testing"
)

const inlineAsserts = `package calc

import "testing"

func TestCalc(t *testing.T) {
	if got := Add(1, 2); got != 3 {
		t.Fatalf("Add = %d", got)
	}
	if got := Add(-1, -2); got != -3 {
		t.Fatalf("Add = %d", got)
	}
	if got := Sub(3, 1); got != 2 {
		t.Fatalf("Sub = %d", got)
	}
	if got := Sub(1, 3); got != -2 {
		t.Fatalf("Sub = %d", got)
	}
}
`

// The refactor of issue 33: four inline assertions become a helper
// taking testing.TB, called four times.
const helperAsserts = `package calc

import "testing"

func check(tb testing.TB, name string, got, want int64) {
	tb.Helper()
	if got != want {
		tb.Fatalf("%s = %d, want %d", name, got, want)
	}
}

func TestCalc(t *testing.T) {
	check(t, "Add", Add(1, 2), 3)
	check(t, "Add", Add(-1, -2), -3)
	check(t, "Sub", Sub(3, 1), 2)
	check(t, "Sub", Sub(1, 3), -2)
}
`

// Test assertions are counted by what they call: a helper refactor, any
// receiver name, testify, closures and helpers in another file of the
// change keep the count, and dropping one call of any of them still
// narrows.
func TestCountingByWhatAssertionsCall(t *testing.T) {
	closure := `package calc

import "testing"

func TestCalc(t *testing.T) {
	eq := func(got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("got %d, want %d", got, want)
		}
	}
	eq(Add(1, 2), 3)
	eq(Add(-1, -2), -3)
	eq(Sub(3, 1), 2)
	eq(Sub(1, 3), -2)
}
`
	testify := `package calc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCalc(t *testing.T) {
	require.Equal(t, int64(3), Add(1, 2))
	require.Equal(t, int64(-3), Add(-1, -2))
	require.Equal(t, int64(2), Sub(3, 1))
	require.Equal(t, int64(-2), Sub(1, 3))
}
`
	bench := "package calc\n\nimport \"testing\"\n\nfunc BenchmarkAdd(bb *testing.B) {\n\tfor bb.Loop() {\n\t\tif Add(1, 2) != 3 {\n\t\t\tbb.Fatal(\"bad\")\n\t\t}\n\t}\n}\n"
	// The helper lives in a helpers file of the same change; the test
	// calls it with a receiver named tb.
	moved := strings.Replace(helperAsserts, "func check(tb testing.TB, name string, got, want int64) {\n\ttb.Helper()\n\tif got != want {\n\t\ttb.Fatalf(\"%s = %d, want %d\", name, got, want)\n\t}\n}\n\n", "", 1)
	helpersFile := "package calc\n\nimport \"testing\"\n\nfunc check(tb testing.TB, name string, got, want int64) {\n\ttb.Helper()\n\tif got != want {\n\t\ttb.Fatalf(\"%s = %d, want %d\", name, got, want)\n\t}\n}\n"
	dropOne := func(s, line string) string { return strings.Replace(s, line, "", 1) }
	for _, c := range []struct {
		name    string
		changes []FileChange
		want    []string
	}{
		{"inline to a testing.TB helper", []FileChange{{"calc/calc_test.go", inlineAsserts, helperAsserts}}, nil},
		{"a helper back to inline", []FileChange{{"calc/calc_test.go", helperAsserts, inlineAsserts}}, nil},
		{"inline to a named closure", []FileChange{{"calc/calc_test.go", inlineAsserts, closure}}, nil},
		{"inline to testify's require", []FileChange{{"calc/calc_test.go", inlineAsserts, testify}}, nil},
		{"the helper moved to another file of the change", []FileChange{
			{"calc/calc_test.go", helperAsserts, moved}, {"calc/helpers_test.go", "", helpersFile}}, nil},
		{"a benchmark's receiver named bb", []FileChange{{"calc/bench_test.go", bench, strings.Replace(bench, "bb.Fatal(\"bad\")", "bb.Fatalf(\"bad: %d\", 1)", 1)}}, nil},
		{"one helper call dropped", []FileChange{{"calc/calc_test.go", helperAsserts, dropOne(helperAsserts, "\tcheck(t, \"Sub\", Sub(1, 3), -2)\n")}},
			[]string{"assertions go from 4 to 3"}},
		{"one closure call dropped", []FileChange{{"calc/calc_test.go", closure, dropOne(closure, "\teq(Sub(1, 3), -2)\n")}},
			[]string{"assertions go from 4 to 3"}},
		{"the helper's own assertion emptied", []FileChange{{"calc/calc_test.go", inlineAsserts,
			strings.Replace(helperAsserts, "\tif got != want {\n\t\ttb.Fatalf(\"%s = %d, want %d\", name, got, want)\n\t}\n", "", 1)}},
			[]string{"assertions go from 4 to 0"}},
		{"one require dropped", []FileChange{{"calc/calc_test.go", testify, dropOne(testify, "\trequire.Equal(t, int64(-2), Sub(1, 3))\n")}},
			[]string{"assertions go from 4 to 3"}},
		{"tb.Skip added", []FileChange{{"calc/calc_test.go", helperAsserts, strings.Replace(helperAsserts, "\tcheck(t, \"Add\", Add(1, 2), 3)\n", "\tt.Skip(\"later\")\n\tcheck(t, \"Add\", Add(1, 2), 3)\n", 1)}},
			[]string{"1 test skip(s) added"}},
		{"a helper call commented out", []FileChange{{"calc/calc_test.go", inlineAsserts,
			strings.Replace(inlineAsserts, "\t\tt.Fatalf(\"Sub = %d\", got)\n\t}\n}", "\t\t// tb.Fatalf(\"Sub = %d\", got)\n\t}\n}", 1)}},
			[]string{"assertions go from 4 to 3", "1 test line(s) commented out"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckTestChanges(c.changes)
			checkReasons(t, got, c.want)
		})
	}
}

// Go that does not parse is counted by the patterns, with the names the
// text gives its testing values.
func TestCountingGoThatDoesNotParse(t *testing.T) {
	before := "func TestX(tb *testing.T) {\n\ttb.Fatal(1)\n\ttb.Errorf(\"x\")\n"
	after := "func TestX(tb *testing.T) {\n\ttb.Fatal(1)\n"
	if got := CheckTestChanges([]FileChange{{"x_test.go", before, after}}); len(got) != 1 || !strings.Contains(got[0], "assertions go from 2 to 1") {
		t.Fatalf("reasons = %q", got)
	}
}
