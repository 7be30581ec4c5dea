package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// tally is a state with a reducer of every kind: Log and Words are
// appended to, Count and Score summed, Winner is the last write, Seen is
// merged by a custom reducer, and Topic (a send's input) and Phase have
// none: one writer per step.
type tally struct {
	Log    []string `graph:"append"`
	Words  []string `graph:"append"`
	Count  int      `graph:"sum"`
	Score  float64  `graph:"sum"`
	Winner string   `graph:"last"`
	Seen   map[string]int
	Topic  string
	Phase  string
}

// tallyGraph: start fans out to a named node "left" that returns the whole
// state (the old way), a Partial node "right", and one send to "word" per
// topic (Partial), which all go to "end". failing, when set, names a topic
// whose word branch fails.
func tallyGraph(failing *atomic.Value, runs *atomic.Int32) *graph.Graph[tally] {
	left := func(_ context.Context, s tally) (tally, error) {
		runs.Add(1)
		s.Log = append(slices.Clone(s.Log), "left")
		s.Count += 2
		s.Winner = "left"
		s.Seen = addCounts(s.Seen, map[string]int{"left": 1})
		return s, nil
	}
	right := func(_ context.Context, s tally) (tally, error) {
		runs.Add(1)
		return tally{Log: []string{"right"}, Count: 3, Score: 0.5, Winner: "right", Seen: map[string]int{"right": 1}}, nil
	}
	word := func(_ context.Context, s tally) (tally, error) {
		runs.Add(1)
		if f, _ := failing.Load().(string); f == s.Topic {
			return s, fmt.Errorf("no word for %s", s.Topic)
		}
		return tally{Words: []string{strings.ToUpper(s.Topic)}, Count: 1, Seen: map[string]int{"word": 1}}, nil
	}
	route := func(_ context.Context, s tally) (graph.Routes[tally], error) {
		r := graph.SendEach("word", strings.Fields(s.Phase), func(t string) tally { return tally{Topic: t} })
		r.Nodes = []string{"left", "right"}
		return r, nil
	}
	return graph.New[tally]().
		AddNode("start", func(_ context.Context, s tally) (tally, error) { return tally{Log: []string{"start"}}, nil }, graph.Partial()).
		AddNode("left", left).
		AddNode("right", right, graph.Partial()).
		AddNode("word", word, graph.Partial()).
		AddNode("end", func(_ context.Context, s tally) (tally, error) { runs.Add(1); return tally{Phase: "done"}, nil }, graph.Partial()).
		AddEdge(graph.START, "start").
		AddRoute("start", route, "left", "right", "word").
		AddEdge("left", "end").AddEdge("right", "end").AddEdge("word", "end").
		AddEdge("end", graph.END).
		Reduce(graph.Reducer(func(s *tally) *map[string]int { return &s.Seen }, addCounts))
}

// TestReducersMergeFanOut: a step that mixes a whole-state node, a Partial
// node and sends needs no merge function: each field combines the
// branches' writes with its reducer, in branch order. A failing send
// leaves the finished branches saved; Resume runs only it, and the result
// is the same as a run that never failed.
func TestReducersMergeFanOut(t *testing.T) {
	want := `log=[start left right] words=[A B C] count=8 score=0.5 winner=right seen=map[left:1 right:1 word:3] phase=done`
	show := func(s tally) string {
		return fmt.Sprintf("log=%v words=%v count=%d score=%v winner=%s seen=%v phase=%s",
			s.Log, s.Words, s.Count, s.Score, s.Winner, s.Seen, s.Phase)
	}
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		var failing atomic.Value
		var runs atomic.Int32
		r := mustCompile(t, tallyGraph(&failing, &runs), graph.WithStore(store))
		ctx := context.Background()
		res, err := r.Run(ctx, "ok", tally{Phase: "a b c"})
		if err != nil || show(res.State) != want {
			t.Fatalf("run = %s, %v\nwant %s", show(res.State), err, want)
		}

		failing.Store("b")
		runs.Store(0)
		if _, err := r.Run(ctx, "fails", tally{Phase: "a b c"}); err == nil || !strings.Contains(err.Error(), "no word for b") {
			t.Fatalf("run with a failing send = %v", err)
		}
		if n := runs.Load(); n != 5 {
			t.Errorf("%d node runs, want 5: every branch, the failing one included", n)
		}
		failing.Store("")
		runs.Store(0)
		res, err = r.Resume(ctx, "fails")
		if err != nil || show(res.State) != want {
			t.Fatalf("resume = %s, %v\nwant %s", show(res.State), err, want)
		}
		if n := runs.Load(); n != 2 {
			t.Errorf("resume ran %d nodes, want 2: the failed send and end", n)
		}
	})
}

// TestReducerConflict: two branches writing a field without a reducer fail
// the step with ErrConflict, naming the field and the nodes, as LangGraph's
// InvalidUpdateError; writing different fields is fine.
func TestReducerConflict(t *testing.T) {
	type st struct {
		A, B string
		Log  []string `graph:"append"`
	}
	set := func(f func(*st)) graph.NodeFunc[st] {
		return func(_ context.Context, s st) (st, error) { f(&s); return s, nil }
	}
	build := func(right func(*st)) *graph.Runner[st] {
		return mustCompile(t, graph.New[st]().
			AddNode("left", set(func(s *st) { s.A = "left" })).
			AddNode("right", set(right)).
			AddEdge(graph.START, "left").AddEdge(graph.START, "right").
			AddEdge("left", graph.END).AddEdge("right", graph.END))
	}
	res, err := build(func(s *st) { s.B = "right" }).Run(context.Background(), "r", st{})
	if err != nil || res.State.A != "left" || res.State.B != "right" {
		t.Fatalf("disjoint writes: %+v, %v", res.State, err)
	}
	_, err = build(func(s *st) { s.A = "right" }).Run(context.Background(), "r", st{})
	if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), "field A was written by left, right") {
		t.Fatalf("conflicting writes: %v", err)
	}
}

// TestPartialUpdate: a Partial node writes only its non-zero fields, each
// through its reducer; the others keep their values, and its input is not
// changed.
func TestPartialUpdate(t *testing.T) {
	in := tally{Log: make([]string, 1, 8), Count: 1, Phase: "p", Winner: "w"}
	in.Log[0] = "x"
	g := graph.New[tally]().
		AddNode("n", func(_ context.Context, s tally) (tally, error) {
			return tally{Log: []string{"y"}, Count: 2, Topic: "t"}, nil
		}, graph.Partial()).
		AddEdge(graph.START, "n").AddEdge("n", graph.END)
	res, err := mustCompile(t, g).Run(context.Background(), "r", in)
	got := fmt.Sprintf("%v %d %s %s %s", res.State.Log, res.State.Count, res.State.Phase, res.State.Winner, res.State.Topic)
	if err != nil || got != "[x y] 3 p w t" {
		t.Fatalf("partial = %s, %v", got, err)
	}
	if spare := in.Log[:2]; spare[1] != "" {
		t.Errorf("the update was appended into the input's spare capacity: %q", spare)
	}
}

// TestMergeBranchesTellsBranchesApart: WithMergeBranches gives the merge
// each branch's node, index, send index and input.
func TestMergeBranchesTellsBranchesApart(t *testing.T) {
	type st struct {
		Topic string
		Out   []string
	}
	var got []string
	merge := func(_ context.Context, base st, bs []graph.Branch[st]) (st, error) {
		for _, b := range bs {
			got = append(got, fmt.Sprintf("%s#%d send=%d in=%q out=%v", b.Node, b.Index, b.Send, b.Input.Topic, b.Result.Out))
		}
		return base, nil
	}
	echo := func(_ context.Context, s st) (st, error) { return st{Out: []string{"saw " + s.Topic}}, nil }
	g := graph.New[st]().
		AddNode("start", func(_ context.Context, s st) (st, error) { return s, nil }).
		AddNode("named", echo).AddNode("sent", echo).
		AddEdge(graph.START, "start").
		AddRoute("start", func(_ context.Context, s st) (graph.Routes[st], error) {
			r := graph.SendEach("sent", []string{"x", "y"}, func(t string) st { return st{Topic: t} })
			r.Nodes = []string{"named"}
			return r, nil
		}, "named", "sent").
		AddEdge("named", graph.END).AddEdge("sent", graph.END)
	r := mustCompile(t, g, graph.WithMergeBranches(merge))
	if _, err := r.Run(context.Background(), "r", st{Topic: "base"}); err != nil {
		t.Fatal(err)
	}
	want := `named#0 send=-1 in="base" out=[saw base]
sent#1 send=0 in="x" out=[saw x]
sent#2 send=1 in="y" out=[saw y]`
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("branches:\n%s\nwant:\n%s", g, want)
	}
}

// TestReducerCompileChecks: Compile reports every misuse of reducers,
// Partial and the typed options at once.
func TestReducerCompileChecks(t *testing.T) {
	type bad struct {
		A     int    `graph:"append"`
		B     string `graph:"sum"`
		C     []int  `graph:"concat"`
		d     []int  `graph:"append"`
		E     []int  `graph:"append"`
		F     map[string]int
		Inner struct{ X int }
	}
	keep := func(_ context.Context, s bad) (bad, error) { return s, nil }
	pick := func(cur, w map[string]int) map[string]int { return w }
	type ok struct{ X int }
	child := mustCompile(t, graph.New[ok]().
		AddNode("c", func(_ context.Context, s ok) (ok, error) { return s, nil }).
		AddEdge(graph.START, "c").AddEdge("c", graph.END))
	g := graph.New[bad]().
		AddNode("n", keep, graph.CacheKey(func(s int) string { return "" }, 0))
	graph.AddSubgraph(g, "sub", child, func(bad) ok { return ok{} }, func(b bad, _ ok) bad { return b }, graph.Partial())
	g.AddEdge(graph.START, "n").AddEdge("n", "sub").AddEdge("sub", graph.END).
		Reduce(
			graph.Reducer(func(s *bad) *map[string]int { return &s.F }, pick),
			graph.Reducer(func(s *bad) *map[string]int { return &s.F }, pick),
			graph.Reducer(func(s *bad) *[]int { return &s.E }, func(a, b []int) []int { return b }),
			graph.Reducer(func(s *bad) *int { return &s.Inner.X }, func(a, b int) int { return b }),
			graph.Reducer(func(s *bad) *[]int { return &s.d }, func(a, b []int) []int { return b }),
			graph.FieldReducer[bad]{},
		)
	_, err := g.Compile(graph.WithMerge(func(_ context.Context, b bad, _ []bad) (bad, error) { return b, nil }),
		graph.WithMergeBranches(func(_ context.Context, b bad, _ []graph.Branch[bad]) (bad, error) { return b, nil }))
	var ce *graph.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("Compile = %v, want a CompileError", err)
	}
	for _, want := range []string{
		`field A: graph:"append" needs a slice, not int`,
		`field B: graph:"sum" needs a number, not string`,
		`field C: unknown reducer graph:"concat" (use append, sum or last)`,
		`field d: a graph tag on an unexported field`,
		`Reduce: field F has two custom reducers`,
		`Reduce: field E has a graph:"append" tag and a custom reducer`,
		`Reduce: the field function returns a int inside a field of graph_test.bad, not a top-level field`,
		`Reduce: field d is unexported`,
		`Reduce: a zero FieldReducer (make one with graph.Reducer)`,
		`node "n": CacheKey's key function func(int) string does not take the state type graph_test.bad`,
		`node "sub": a subgraph cannot be Partial`,
		`both WithMerge and WithMergeBranches`,
	} {
		if !slices.ContainsFunc(ce.Problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no problem %q in:\n%s", want, strings.Join(ce.Problems, "\n"))
		}
	}

	// A state that is not a struct takes neither Partial nor Reduce.
	ng := graph.New[int]().
		AddNode("n", func(_ context.Context, s int) (int, error) { return s, nil }, graph.Partial()).
		AddEdge(graph.START, "n").AddEdge("n", graph.END).
		Reduce(graph.Reducer(func(s *int) *int { return s }, func(a, b int) int { return a + b }))
	_, err = ng.Compile()
	if err == nil || !strings.Contains(err.Error(), "Reduce: the state type int is not a struct") ||
		!strings.Contains(err.Error(), `node "n": Partial needs a struct state, not int`) {
		t.Errorf("int state: %v", err)
	}

	// A fan-out needs a merge function or reducers.
	type plain struct{ A, B string }
	pn := func(_ context.Context, s plain) (plain, error) { return s, nil }
	_, err = graph.New[plain]().AddNode("a", pn).AddNode("b", pn).
		AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", graph.END).AddEdge("b", graph.END).Compile()
	if err == nil || !strings.Contains(err.Error(), `node "__start__" fans out without a merge function (WithMerge, or reducers on the state's fields)`) {
		t.Errorf("fan-out without merge or reducers: %v", err)
	}
}
