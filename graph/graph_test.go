package graph_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// trail is the state of most tests: a counter and the nodes that ran.
type trail struct {
	N   int
	Log []string
}

func (t trail) with(name string) trail {
	t.N++
	t.Log = append(slices.Clip(t.Log), name)
	return t
}

func step(name string) graph.NodeFunc[trail] {
	return func(_ context.Context, s trail) (trail, error) { return s.with(name), nil }
}

// fixedClock returns a clock that starts at a fixed time and ticks one
// second per call. Like every clock given to WithClock, it is safe for
// concurrent use: fan-out branches read it at once.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func mustCompile[S any](t *testing.T, g *graph.Graph[S], opts ...graph.Option) *graph.Runner[S] {
	t.Helper()
	r, err := g.Compile(opts...)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return r
}

func TestLinearRunCheckpointsEveryStep(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	g := graph.New[trail]().
		AddNode("a", step("a")).
		AddNode("b", step("b")).
		AddEdge(graph.START, "a").
		AddEdge("a", "b").
		AddEdge("b", graph.END)
	r := mustCompile(t, g, graph.WithStore(store), graph.WithClock(fixedClock()))
	res, err := r.Run(ctx, "r1", trail{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != graph.Done || res.State.N != 2 || !slices.Equal(res.State.Log, []string{"a", "b"}) || res.Seq != 3 {
		t.Fatalf("result = %+v", res)
	}
	hist, err := r.History(ctx, "r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist {
		got = append(got, strings.Join(h.Ran, ",")+">"+strings.Join(h.Next, ",")+":"+h.Status)
	}
	want := []string{"b>:done", "a>b:running", graph.START + ">a:running"}
	if !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
	if hist[0].Seq != 3 || hist[0].Parent != 2 || hist[2].Step != 0 || hist[0].Step != 2 {
		t.Fatalf("seq/parent/step wrong: %+v", hist)
	}
	if _, err := r.Run(ctx, "r1", trail{}); !errors.Is(err, graph.ErrRunExists) {
		t.Fatalf("second Run = %v, want ErrRunExists", err)
	}
	if _, err := r.Resume(ctx, "r1"); !errors.Is(err, graph.ErrRunDone) {
		t.Fatalf("Resume of done run = %v, want ErrRunDone", err)
	}
	if _, err := r.Resume(ctx, "nope"); !errors.Is(err, graph.ErrRunNotFound) {
		t.Fatalf("Resume of unknown run = %v, want ErrRunNotFound", err)
	}
}

func TestRunWithoutStore(t *testing.T) {
	g := graph.New[trail]().AddNode("a", step("a")).AddEdge(graph.START, "a").AddEdge("a", graph.END)
	r := mustCompile(t, g)
	res, err := r.Run(context.Background(), "x", trail{})
	if err != nil || res.State.N != 1 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if _, err := r.Resume(context.Background(), "x"); !errors.Is(err, graph.ErrNoStore) {
		t.Fatalf("Resume = %v, want ErrNoStore", err)
	}
}

func TestCompileListsEveryProblem(t *testing.T) {
	route := func(context.Context, trail) ([]string, error) { return nil, nil }
	g := graph.New[trail]().
		AddNode("a", step("a")).
		AddNode("a", step("a")).           // duplicate
		AddNode(graph.END, step("x")).     // reserved
		AddNode("orphan", step("orphan")). // unreachable
		AddNode("loop", step("loop")).     // dead end: never reaches END
		AddNode("stuck", step("stuck")).   // no outgoing edge
		AddNode("fan", step("fan")).       // static fan-out without merge
		AddEdge("a", "ghost").             // unknown target
		AddEdge("a", "loop").
		AddEdge("loop", "loop").
		AddEdge("a", "stuck").
		AddEdge("a", "fan").
		AddEdge("fan", graph.END).
		AddEdge("orphan", graph.END).
		AddConditionalEdge("nowhere", route, "a") // unknown source
	_, err := g.Compile(graph.WithInterruptBefore("nobody"))
	var ce *graph.CompileError
	if !errors.As(err, &ce) || !errors.Is(err, graph.ErrInvalidGraph) {
		t.Fatalf("Compile = %v, want *CompileError", err)
	}
	for _, want := range []string{
		`node "a" added twice`,
		`node "__end__" uses a reserved name`,
		`no edge from START`,
		`edge a -> unknown node "ghost"`,
		`conditional edge from unknown node "nowhere"`,
		`node "orphan" is unreachable`,
		`node "loop" is a dead end: no path from it reaches END`,
		`node "stuck" is a dead end: it has no outgoing edge`,
		`node "a" fans out without a merge function`,
		`interrupt before unknown node "nobody"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestCompileReportsDuplicateWithNilFunction: a name added twice is a
// duplicate even when one of the two has a nil function, in either order.
func TestCompileReportsDuplicateWithNilFunction(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, last graph.NodeFunc[trail]
	}{
		{"nil first", nil, step("a")},
		{"nil last", step("a"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New[trail]().
				AddNode("a", tc.first).
				AddNode("a", tc.last).
				AddEdge(graph.START, "a").AddEdge("a", graph.END)
			_, err := g.Compile()
			var ce *graph.CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile = %v, want *CompileError", err)
			}
			want := []string{`node "a" added twice`, `node "a" has a nil function`}
			if !slices.Equal(slices.Sorted(slices.Values(ce.Problems)), want) {
				t.Errorf("problems = %q, want %q", ce.Problems, want)
			}
		})
	}
}

// TestCompileErrorCountsProblems: the summary line agrees in number.
func TestCompileErrorCountsProblems(t *testing.T) {
	for _, tc := range []struct {
		problems []string
		want     string
	}{
		{[]string{"x"}, "graph: invalid graph (1 problem)\n\tx"},
		{[]string{"x", "y"}, "graph: invalid graph (2 problems)\n\tx\n\ty"},
	} {
		if got := (&graph.CompileError{Problems: tc.problems}).Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestStepLimit(t *testing.T) {
	loop := func(context.Context, trail) ([]string, error) { return []string{"a"}, nil }
	g := graph.New[trail]().AddNode("a", step("a")).AddEdge(graph.START, "a").
		AddConditionalEdge("a", loop, "a", graph.END)
	r := mustCompile(t, g, graph.WithStepLimit(5))
	_, err := r.Run(context.Background(), "r", trail{})
	if !errors.Is(err, graph.ErrStepLimit) || !strings.Contains(err.Error(), "5 steps") {
		t.Fatalf("Run = %v, want ErrStepLimit naming 5", err)
	}
}

func TestRouterUndeclaredTargetFails(t *testing.T) {
	bad := func(context.Context, trail) ([]string, error) { return []string{"b"}, nil }
	g := graph.New[trail]().AddNode("a", step("a")).AddNode("b", step("b")).
		AddEdge(graph.START, "a").AddEdge("b", graph.END).
		AddConditionalEdge("a", bad, graph.END)
	g.AddEdge(graph.START, "b") // keep b reachable
	r := mustCompile(t, g, graph.WithMerge(func(_ context.Context, base trail, br []trail) (trail, error) { return br[0], nil }))
	_, err := r.Run(context.Background(), "r", trail{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "b" && ne.Node != "a" || !strings.Contains(err.Error(), "not a declared target") {
		t.Fatalf("Run = %v, want NodeError about an undeclared target", err)
	}
}
