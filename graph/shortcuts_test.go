package graph_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// TestMustCompile: a graph that compiles gives a working Runner; one that
// does not panics with the *CompileError Compile returns, every problem in it.
func TestMustCompile(t *testing.T) {
	r := graph.New[trail]().AddNode("a", step("a")).AddPath(graph.START, "a", graph.END).MustCompile()
	res, err := r.Run(context.Background(), "r", trail{})
	if err != nil || !slices.Equal(res.State.Log, []string{"a"}) {
		t.Fatalf("Run = %v, %v; want [a]", res.State.Log, err)
	}
	defer func() {
		var ce *graph.CompileError
		err, _ := recover().(error)
		if !errors.As(err, &ce) || !errors.Is(err, graph.ErrInvalidGraph) {
			t.Fatalf("MustCompile panicked with %v; want a *CompileError", err)
		}
		if !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), "negative step limit") {
			t.Errorf("the panic does not hold every problem: %v", err)
		}
	}()
	graph.New[trail]().AddNode("a", step("a")).AddPath(graph.START, "a", "b").MustCompile(graph.WithStepLimit(-1))
	t.Fatal("MustCompile of a broken graph returned")
}

// TestAddPath: a path is its edges in order; a repeated edge and a path of
// fewer than two nodes are Compile problems.
func TestAddPath(t *testing.T) {
	g := graph.New[trail]().AddNode("a", step("a")).AddNode("b", step("b")).AddNode("c", step("c")).
		AddPath(graph.START, "a", "b", "c", graph.END)
	r := mustCompile(t, g)
	res, err := r.Run(context.Background(), "r", trail{})
	if err != nil || !slices.Equal(res.State.Log, []string{"a", "b", "c"}) {
		t.Fatalf("Run = %v, %v; want [a b c]", res.State.Log, err)
	}
	for name, g := range map[string]*graph.Graph[trail]{
		"path [\"a\"] has fewer than two nodes": graph.New[trail]().AddNode("a", step("a")).
			AddPath(graph.START, "a", graph.END).AddPath("a"),
		"edge a -> END added twice": graph.New[trail]().AddNode("a", step("a")).
			AddPath(graph.START, "a", graph.END).AddEdge("a", graph.END),
	} {
		_, err := g.Compile()
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), graph.END, "END"), name) {
			t.Errorf("Compile = %v; want %q", err, name)
		}
	}
}

// TestEntrypoint is LangGraph's functional API: one node between START and
// END, whose durable task runs once though the node runs again on resume,
// with its node options applied (Partial keeps Amount).
func TestEntrypoint(t *testing.T) {
	type order struct {
		Amount int
		Result string
	}
	var charges atomic.Int32
	fn := func(ctx context.Context, s order) (order, error) {
		receipt, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			charges.Add(1)
			return fmt.Sprint("receipt for ", s.Amount), nil
		})
		if err != nil {
			return s, err
		}
		ship, err := graph.Ask[bool](ctx, "ship?")
		return order{Result: fmt.Sprint(receipt, " shipped=", ship)}, err
	}
	r := graph.Entrypoint("order", fn, graph.Partial()).MustCompile(graph.WithMemoryStore())
	ctx := context.Background()
	res, err := r.Run(ctx, "t", order{Amount: 42})
	if err != nil || res.Status != graph.Interrupted || res.Interrupt.Node != "order" {
		t.Fatalf("Run = %+v, %v; want interrupted in order", res, err)
	}
	res, err = r.Resume(ctx, "t", graph.WithResume(true))
	if err != nil || res.State != (order{Amount: 42, Result: "receipt for 42 shipped=true"}) {
		t.Fatalf("Resume = %+v, %v", res.State, err)
	}
	if n := charges.Load(); n != 1 {
		t.Errorf("the task ran %d times; want 1", n)
	}
	if got := r.Mermaid(); !strings.Contains(got, "order") {
		t.Errorf("the entrypoint graph has no order node:\n%s", got)
	}
}

// TestWithMemoryStore: each runner gets its own store, which keeps its runs
// (a run id is taken, Resume and History work) and nothing of another's.
func TestWithMemoryStore(t *testing.T) {
	ctx := context.Background()
	g := graph.New[trail]().AddNode("a", step("a")).AddPath(graph.START, "a", graph.END)
	r1, r2 := g.MustCompile(graph.WithMemoryStore()), g.MustCompile(graph.WithMemoryStore())
	if _, err := r1.Run(ctx, "r", trail{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Run(ctx, "r", trail{}); !errors.Is(err, graph.ErrRunExists) {
		t.Errorf("second Run of r = %v; want ErrRunExists", err)
	}
	if h, err := r1.History(ctx, "r", 0); err != nil || len(h) != 2 {
		t.Errorf("History = %d checkpoints, %v; want 2", len(h), err)
	}
	if _, err := r2.Run(ctx, "r", trail{}); err != nil {
		t.Errorf("r2 shares r1's store: %v", err)
	}
}

// TestUpdates: the typed stream yields each node update of the run, the
// parallel branches as they finish (pending, the fast one first: the slow
// one waits for the reader to see it), and of a subgraph only its node's
// result, not the updates inside it.
func TestUpdates(t *testing.T) {
	release := make(chan struct{})
	close(release)
	var failing atomic.Value
	child := laneGraph(release, &failing).MustCompile()
	r := graph.New[lanes]().AddSubgraph("sub", child).AddNode("end", func(_ context.Context, s lanes) (lanes, error) {
		return lanes{Done: []string{"end"}}, nil
	}, graph.Partial()).AddPath(graph.START, "sub", "end", graph.END).MustCompile(graph.WithMemoryStore())
	var got []string
	for u, err := range r.Updates(context.Background(), "u", lanes{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s#%d %v pending=%v", u.Node, u.Branch, u.State.Done, u.Pending))
	}
	want := "sub#0 [slow fast] pending=false|end#0 [end] pending=false"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("updates of the parent: %s; want %s", g, want)
	}

	release = make(chan struct{})
	r = laneGraph(release, &failing).MustCompile()
	got = nil
	for u, err := range r.Updates(context.Background(), "l", lanes{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s#%d %v pending=%v", u.Node, u.Branch, u.State.Done, u.Pending))
		if u.Node == "lane" && u.Branch == 1 {
			close(release)
		}
	}
	want = "plan#0 [] pending=false|lane#1 [fast] pending=true|lane#0 [slow] pending=true"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("updates: %s; want %s", g, want)
	}
}

// TestUpdatesErrorAndStop: a failing run yields its error last; breaking
// the loop stops the run, which Resume finishes.
func TestUpdatesErrorAndStop(t *testing.T) {
	release := make(chan struct{})
	close(release)
	var failing atomic.Value
	failing.Store("fast")
	r := laneGraph(release, &failing).MustCompile(graph.WithMemoryStore())
	var last error
	n := 0
	for _, err := range r.Updates(context.Background(), "f", lanes{}) {
		n++
		last = err
	}
	if last == nil || !strings.Contains(last.Error(), "lane fast broke") {
		t.Errorf("last yield = %v; want the lane's error", last)
	}
	failing.Store("")
	g := graph.New[trail]().AddNode("a", step("a")).AddNode("b", step("b")).AddPath(graph.START, "a", "b", graph.END)
	tr := g.MustCompile(graph.WithMemoryStore())
	ctx := context.Background()
	for u := range tr.Updates(ctx, "s", trail{}) {
		if u.Node != "a" {
			t.Fatalf("first update from %q", u.Node)
		}
		break
	}
	res, err := tr.Resume(ctx, "s")
	if err != nil || !slices.Equal(res.State.Log, []string{"a", "b"}) {
		t.Errorf("Resume after break = %v, %v; want [a b]", res.State.Log, err)
	}
}

// TestRunAnswering: each interrupt is answered in turn, static ones too;
// an answer's error stops the loop and leaves the run interrupted, to be
// answered later.
func TestRunAnswering(t *testing.T) {
	type form struct {
		Name, Color string
	}
	ask := func(ctx context.Context, s form) (form, error) {
		name, err := graph.Ask[string](ctx, "name?")
		if err != nil {
			return s, err
		}
		color, err := graph.Ask[string](ctx, "color?")
		return form{Name: name, Color: color}, err
	}
	g := graph.Entrypoint("ask", ask)
	r := g.MustCompile(graph.WithMemoryStore(), graph.WithInterruptBefore("ask"))
	var asked []string
	answers := map[string]string{`"name?"`: "ada", `"color?"`: "green"}
	res, err := r.RunAnswering(context.Background(), "a", form{}, func(i *graph.PendingInterrupt) (any, error) {
		asked = append(asked, fmt.Sprintf("%s %s %s", i.Kind, i.Node, i.Payload))
		return answers[string(i.Payload)], nil
	})
	if err != nil || res.Status != graph.Done || res.State != (form{"ada", "green"}) {
		t.Fatalf("RunAnswering = %+v, %v", res, err)
	}
	want := []string{"before ask ", `dynamic ask "name?"`, `dynamic ask "color?"`}
	if !slices.Equal(asked, want) {
		t.Errorf("asked %q; want %q", asked, want)
	}

	r = g.MustCompile(graph.WithMemoryStore())
	later := errors.New("ask me later")
	res, err = r.RunAnswering(context.Background(), "b", form{}, func(i *graph.PendingInterrupt) (any, error) {
		if i.Index == 1 {
			return nil, later
		}
		return "bob", nil
	})
	if !errors.Is(err, later) || res.Status != graph.Interrupted || string(res.Interrupt.Payload) != `"color?"` {
		t.Fatalf("RunAnswering = %+v, %v; want interrupted on color with the answer's error", res, err)
	}
	res, err = r.Resume(context.Background(), "b", graph.WithResume("red"))
	if err != nil || res.State != (form{"bob", "red"}) {
		t.Errorf("Resume = %+v, %v", res.State, err)
	}
}

// TestEntrypointFunc: a function from an input to an output runs durably
// as an entrypoint on either store: its task runs once though the function
// runs again on resume, the run's state keeps In and holds the result in
// Out, and a failing call fails the run and writes no Out. A nil function
// is a Compile problem.
func TestEntrypointFunc(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		var charges atomic.Int32
		fail := errors.New("card declined")
		order := func(ctx context.Context, amounts []int) (map[string]int, error) {
			total := 0
			for _, a := range amounts {
				total += a
			}
			if total < 0 {
				return map[string]int{"negative": total}, fail
			}
			receipt, err := graph.Task(ctx, "charge", func(context.Context) (int, error) {
				charges.Add(1)
				return total, nil
			})
			if err != nil {
				return nil, err
			}
			ship, err := graph.Ask[bool](ctx, fmt.Sprint("ship ", receipt, "?"))
			out := map[string]int{"charged": receipt}
			if ship {
				out["shipped"] = 1
			}
			return out, err
		}
		r := graph.EntrypointFunc("order", order).MustCompile(graph.WithStore(store))
		res, err := r.Run(ctx, "t", graph.Call[[]int, map[string]int]{In: []int{40, 2}})
		if err != nil || res.Status != graph.Interrupted || string(res.Interrupt.Payload) != `"ship 42?"` {
			t.Fatalf("Run = %+v, %v; want interrupted on ship 42?", res, err)
		}
		if res.State.Out != nil {
			t.Errorf("an interrupted call wrote Out %v", res.State.Out)
		}
		res, err = r.Resume(ctx, "t", graph.WithResume(true))
		want := map[string]int{"charged": 42, "shipped": 1}
		if err != nil || !slices.Equal(res.State.In, []int{40, 2}) || !maps.Equal(res.State.Out, want) {
			t.Fatalf("Resume = %+v, %v; want In [40 2], Out %v", res.State, err, want)
		}
		if n := charges.Load(); n != 1 {
			t.Errorf("the task ran %d times; want 1", n)
		}

		res, err = r.Run(ctx, "u", graph.Call[[]int, map[string]int]{In: []int{-1}})
		var ne *graph.NodeError
		if !errors.Is(err, fail) || !errors.As(err, &ne) || ne.Node != "order" {
			t.Fatalf("Run of a failing call = %v; want the function's error from node order", err)
		}
		if snap, err := r.State(ctx, "u"); err != nil || snap.State.Out != nil || !slices.Equal(snap.State.In, []int{-1}) {
			t.Errorf("after the failure the run holds %+v, %v; want In [-1] and no Out", snap.State, err)
		}
	})
	if _, err := graph.EntrypointFunc[int, int]("f", nil).Compile(); !errors.Is(err, graph.ErrInvalidGraph) {
		t.Errorf("Compile with a nil function = %v; want ErrInvalidGraph", err)
	}
}

// TestAnswerAll: every interrupt of the run, static or asked, is answered
// with the one value, and the run finishes.
func TestAnswerAll(t *testing.T) {
	ask := func(ctx context.Context, s trail) (trail, error) {
		a, err := graph.Ask[string](ctx, "first?")
		if err != nil {
			return s, err
		}
		b, err := graph.Ask[string](ctx, "second?")
		return trail{Log: append(slices.Clone(s.Log), a, b)}, err
	}
	r := graph.Entrypoint("ask", ask).MustCompile(graph.WithMemoryStore(), graph.WithInterruptBefore("ask"))
	res, err := r.RunAnswering(context.Background(), "a", trail{}, graph.AnswerAll("yes"))
	if err != nil || res.Status != graph.Done || !slices.Equal(res.State.Log, []string{"yes", "yes"}) {
		t.Fatalf("RunAnswering = %+v, %v; want done with [yes yes]", res, err)
	}
}

// TestEntrypointFuncCache: a cache hit of an EntrypointFunc, Partial or
// not, gives this run the earlier call's Out and keeps this run's In: the
// node's write is its output alone.
func TestEntrypointFuncCache(t *testing.T) {
	for name, opts := range map[string][]graph.NodeOption{"whole": nil, "partial": {graph.Partial()}} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			tens := func(_ context.Context, n int) (string, error) {
				calls++
				return fmt.Sprint(n/10, " tens"), nil
			}
			byTens := graph.CacheKey(func(c graph.Call[int, string]) string { return fmt.Sprint(c.In / 10) }, 0)
			r := graph.EntrypointFunc("tens", tens, append(opts, byTens)...).MustCompile()
			ctx := context.Background()
			for _, in := range []int{42, 47, 12} {
				res, err := r.Run(ctx, fmt.Sprint(in), graph.Call[int, string]{In: in})
				want := graph.Call[int, string]{In: in, Out: fmt.Sprint(in/10, " tens")}
				if err != nil || res.State != want {
					t.Errorf("Run(%d) = %+v, %v; want %+v", in, res.State, err, want)
				}
			}
			if calls != 2 {
				t.Errorf("the function ran %d times; want 2 (47 is a hit of 42)", calls)
			}
		})
	}
}

// TestFunc: a Func node is its function of the state, with or without
// Partial, in a fan-out of Send branches as in a row; a run cancelled in
// one stops at its checkpoint, before the next node, though the node never
// sees its ctx; and a nil function is the Compile problem a nil NodeFunc is.
func TestFunc(t *testing.T) {
	ctx := context.Background()
	t.Run("whole state", func(t *testing.T) {
		r := graph.New[trail]().
			AddNode("a", graph.Func(func(s trail) trail { return s.with("a") })).
			AddNode("b", graph.Func(func(s trail) trail { return s.with("b") })).
			AddPath(graph.START, "a", "b", graph.END).MustCompile()
		res, err := r.Run(ctx, "r", trail{Log: []string{"start"}})
		if err != nil || res.State.N != 2 || !slices.Equal(res.State.Log, []string{"start", "a", "b"}) {
			t.Fatalf("Run = %+v, %v; want N=2 Log=[start a b]", res.State, err)
		}
	})
	t.Run("partial, in Send branches", func(t *testing.T) {
		type st struct {
			Items []string
			Item  string
			Out   []string `graph:"append"`
			Owner string
		}
		r := graph.New[st]().
			AddNode("up", graph.Func(func(s st) st { return st{Out: []string{strings.ToUpper(s.Item)}} }), graph.Partial()).
			AddRoute(graph.START, func(_ context.Context, s st) (graph.Routes[st], error) {
				return graph.SendEach("up", s.Items, func(i string) st { return st{Item: i} }), nil
			}, "up").
			AddEdge("up", graph.END).MustCompile(graph.WithMemoryStore())
		res, err := r.Run(ctx, "r", st{Items: []string{"a", "b", "c"}, Owner: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.State.Out, []string{"A", "B", "C"}) || res.State.Owner != "ann" {
			t.Fatalf("Run = %+v; want Out=[A B C] in send order, Owner kept", res.State)
		}
		hist, err := r.History(ctx, "r", 0)
		if err != nil || len(hist) != 2 || !slices.Equal(hist[0].Ran, []string{"up", "up", "up"}) {
			t.Fatalf("History = %+v, %v; want the three branches in one step", hist, err)
		}
	})
	// A Func node never sees ctx: the run stops between steps, with a
	// store or without one.
	for name, opts := range map[string][]graph.Option{"cancelled run": {graph.WithMemoryStore()}, "cancelled run without a store": nil} {
		t.Run(name, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			var ran atomic.Int32
			r := graph.New[trail]().
				AddNode("a", graph.Func(func(s trail) trail { ran.Add(1); cancel(); return s.with("a") })).
				AddNode("b", graph.Func(func(s trail) trail { ran.Add(1); return s.with("b") })).
				AddPath(graph.START, "a", "b", graph.END).MustCompile(opts...)
			_, err := r.Run(cctx, "r", trail{})
			if !errors.Is(err, context.Canceled) || ran.Load() != 1 {
				t.Fatalf("Run = %v after %d nodes; want context.Canceled after a alone", err, ran.Load())
			}
		})
	}
	t.Run("command and route", func(t *testing.T) {
		triage := func(s trail) graph.Command[trail] {
			return graph.Command[trail]{Update: s.with("triage"), Goto: []string{"b"}}
		}
		route := func(s trail) graph.Routes[trail] {
			if s.N > 2 {
				return graph.Goto[trail](graph.END)
			}
			return graph.Goto[trail]("a")
		}
		r := graph.New[trail]().
			AddCommandNode("triage", graph.Func(triage), []string{"a", "b"}).
			AddNode("a", step("a")).AddNode("b", step("b")).
			AddEdge(graph.START, "triage").AddEdge("a", "b").
			AddRoute("b", graph.Func(route), "a", graph.END).MustCompile()
		res, err := r.Run(ctx, "r", trail{})
		if err != nil || !slices.Equal(res.State.Log, []string{"triage", "b", "a", "b"}) {
			t.Fatalf("Run = %v, %v; want [triage b a b]: the command's goto, then the router's choices", res.State.Log, err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		if graph.Func[trail, trail](nil) != nil {
			t.Fatal("Func(nil) is not nil")
		}
		_, err := graph.New[trail]().
			AddNode("a", graph.Func[trail, trail](nil)).
			AddCommandNode("c", graph.Func[trail, graph.Command[trail]](nil), []string{graph.END}).
			AddRoute("a", graph.Func[trail, graph.Routes[trail]](nil), "c").
			AddPath(graph.START, "a").Compile()
		for _, want := range []string{`node "a" has a nil function`, `node "c" has a nil function`, `route from "a" has a nil router`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Compile = %v; want %q", err, want)
			}
		}
	})
}
