package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// askNode asks each question in turn with Interrupt and logs the answers.
func askNode(runs *int, questions ...string) graph.NodeFunc[trail] {
	return func(ctx context.Context, s trail) (trail, error) {
		*runs++
		for _, q := range questions {
			raw, err := graph.Interrupt(ctx, q)
			if err != nil {
				return s, err
			}
			var a string
			if err := json.Unmarshal(raw, &a); err != nil {
				return s, err
			}
			s = s.with(q + "=" + a)
		}
		return s, nil
	}
}

func askGraph(runs *int, questions ...string) *graph.Graph[trail] {
	return graph.New[trail]().
		AddNode("a", step("a")).
		AddNode("ask", askNode(runs, questions...)).
		AddNode("b", step("b")).
		AddEdge(graph.START, "a").AddEdge("a", "ask").AddEdge("ask", "b").AddEdge("b", graph.END)
}

func TestInterruptSingle(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		runs := 0
		r := mustCompile(t, askGraph(&runs, "ship?"), graph.WithStore(store))
		res, err := r.Run(ctx, "i", trail{})
		if err != nil {
			t.Fatal(err)
		}
		want := graph.PendingInterrupt{Node: "ask", Kind: graph.KindDynamic, Payload: json.RawMessage(`"ship?"`), Index: 0}
		if res.Status != graph.Interrupted || res.Interrupt == nil || fmt.Sprint(*res.Interrupt) != fmt.Sprint(want) {
			t.Fatalf("Run = %+v, want interrupt %+v", res, want)
		}
		if _, err := r.Resume(ctx, "i"); !errors.Is(err, graph.ErrInterrupted) {
			t.Fatalf("Resume without a value = %v, want ErrInterrupted", err)
		}
		res, err = r.Resume(ctx, "i", graph.WithResume("yes"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != graph.Done || !slices.Equal(res.State.Log, []string{"a", "ship?=yes", "b"}) || runs != 2 {
			t.Fatalf("Resume = %+v (node ran %d times)", res, runs)
		}
		if _, err := r.Resume(ctx, "i", graph.WithResume("again")); !errors.Is(err, graph.ErrRunDone) {
			t.Fatalf("Resume of done run = %v, want ErrRunDone", err)
		}
	})
}

func TestInterruptTwiceInOneNode(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		runs := 0
		r := mustCompile(t, askGraph(&runs, "q1", "q2"), graph.WithStore(store))
		res, err := r.Run(ctx, "i", trail{})
		if err != nil || res.Interrupt == nil || res.Interrupt.Index != 0 || string(res.Interrupt.Payload) != `"q1"` {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		res, err = r.Resume(ctx, "i", graph.WithResume("a1"))
		if err != nil || res.Interrupt == nil || res.Interrupt.Index != 1 || string(res.Interrupt.Payload) != `"q2"` {
			t.Fatalf("first Resume = %+v, %v", res, err)
		}
		snap, err := r.State(ctx, "i")
		if err != nil || snap.Status != graph.StatusInterrupted || !slices.Equal(snap.Next, []string{"ask"}) {
			t.Fatalf("State = %+v, %v", snap, err)
		}
		res, err = r.Resume(ctx, "i", graph.WithResume("a2"))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a", "q1=a1", "q2=a2", "b"}; !slices.Equal(res.State.Log, want) || runs != 3 {
			t.Fatalf("log = %v, want %v (node ran %d times)", res.State.Log, want, runs)
		}
	})
}

func TestInterruptBeforeAndAfter(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		runs := 0
		r := mustCompile(t, askGraph(&runs), graph.WithStore(store),
			graph.WithInterruptBefore("ask"), graph.WithInterruptAfter("ask"))
		res, err := r.Run(ctx, "s", trail{})
		if err != nil || res.Interrupt == nil || fmt.Sprint(*res.Interrupt) != fmt.Sprint(graph.PendingInterrupt{Node: "ask", Kind: graph.KindBefore}) || runs != 0 {
			t.Fatalf("Run = %+v, %v (ask ran %d times)", res, err, runs)
		}
		if !slices.Equal(res.State.Log, []string{"a"}) {
			t.Fatalf("state before ask = %v", res.State.Log)
		}
		res, err = r.Resume(ctx, "s")
		if err != nil || res.Interrupt == nil || fmt.Sprint(*res.Interrupt) != fmt.Sprint(graph.PendingInterrupt{Node: "ask", Kind: graph.KindAfter}) || runs != 1 {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
		if !slices.Equal(res.State.Log, []string{"a"}) || res.State.N != 1 {
			t.Fatalf("state after ask = %+v", res.State)
		}
		res, err = r.Resume(ctx, "s", graph.WithResume("ok"))
		if err != nil || res.Status != graph.Done || res.State.N != 2 {
			t.Fatalf("last Resume = %+v, %v", res, err)
		}
	})
}

func TestResumeValueForRunningRunFails(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		broken := true
		g := graph.New[trail]().
			AddNode("a", step("a")).
			AddNode("b", func(_ context.Context, s trail) (trail, error) {
				if broken {
					return s, errors.New("boom")
				}
				return s.with("b"), nil
			}).
			AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
		r := mustCompile(t, g, graph.WithStore(store))
		if _, err := r.Run(ctx, "c", trail{}); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("Run = %v, want boom", err)
		}
		if _, err := r.Resume(ctx, "c", graph.WithResume(true)); !errors.Is(err, graph.ErrNotInterrupted) {
			t.Fatalf("Resume(WithResume) = %v, want ErrNotInterrupted", err)
		}
		broken = false
		res, err := r.Resume(ctx, "c")
		if err != nil || !slices.Equal(res.State.Log, []string{"a", "b"}) {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
	})
}

func TestInterruptInFanOutBranch(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		var leftRuns, askRuns int
		split := func(context.Context, trail) ([]string, error) { return []string{"left", "ask"}, nil }
		g := graph.New[trail]().
			AddNode("left", func(_ context.Context, s trail) (trail, error) { leftRuns++; return s.with("left"), nil }).
			AddNode("ask", askNode(&askRuns, "go?")).
			AddConditionalEdge(graph.START, split, "left", "ask").
			AddEdge("left", graph.END).AddEdge("ask", graph.END)
		r := mustCompile(t, g, graph.WithStore(store), graph.WithMerge(mergeTrails))
		res, err := r.Run(ctx, "fi", trail{})
		if err != nil || res.Status != graph.Interrupted {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		res, err = r.Resume(ctx, "fi", graph.WithResume("yes"))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"left", "go?=yes"}; !slices.Equal(res.State.Log, want) || leftRuns != 1 || askRuns != 2 {
			t.Fatalf("log = %v, want %v; left ran %d, ask ran %d", res.State.Log, want, leftRuns, askRuns)
		}
	})
}

func TestResumeValueSurvivesAFailedStep(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		runs := 0
		broken := true
		g := graph.New[trail]().
			AddNode("ask", func(ctx context.Context, s trail) (trail, error) {
				runs++
				raw, err := graph.Interrupt(ctx, "go?")
				if err != nil {
					return s, err
				}
				if broken { // dies after reading the answer, before the step is saved
					return s, errors.New("crash")
				}
				return s.with("answer=" + string(raw)), nil
			}).
			AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
		r := mustCompile(t, g, graph.WithStore(store))
		if _, err := r.Run(ctx, "v", trail{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Resume(ctx, "v", graph.WithResume(42)); err == nil || !strings.Contains(err.Error(), "crash") {
			t.Fatalf("Resume = %v, want the crash", err)
		}
		broken = false
		res, err := r.Resume(ctx, "v") // no value: the saved answer is used
		if err != nil || !slices.Equal(res.State.Log, []string{"answer=42"}) || runs != 3 {
			t.Fatalf("Resume = %+v, %v (node ran %d times)", res, err, runs)
		}
	})
}

func TestInterruptAfterThenBefore(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		runs := 0
		r := mustCompile(t, askGraph(&runs), graph.WithStore(store),
			graph.WithInterruptAfter("a"), graph.WithInterruptBefore("ask"))
		var kinds []string
		res, err := r.Run(ctx, "ab", trail{})
		for err == nil && res.Status == graph.Interrupted {
			kinds = append(kinds, res.Interrupt.Kind+" "+res.Interrupt.Node)
			res, err = r.Resume(ctx, "ab")
		}
		if err != nil || !slices.Equal(kinds, []string{"after a", "before ask"}) || res.State.N != 2 {
			t.Fatalf("stops %v, then %+v, %v", kinds, res, err)
		}
	})
}

// An interrupt after the last node stops the run there, as LangGraph's
// interrupt_after does; resuming finishes the run without running the
// node again, and a second resume finds the run done.
func TestInterruptAfterTheLastNode(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		runs := 0
		g := graph.New[trail]().
			AddNode("a", step("a")).
			AddNode("last", func(_ context.Context, s trail) (trail, error) { runs++; return s.with("last"), nil }).
			AddEdge(graph.START, "a").AddEdge("a", "last").AddEdge("last", graph.END)
		r := mustCompile(t, g, graph.WithStore(store), graph.WithInterruptAfter("last"))
		res, err := r.Run(ctx, "end", trail{})
		if err != nil || res.Status != graph.Interrupted || res.Interrupt == nil ||
			fmt.Sprint(*res.Interrupt) != fmt.Sprint(graph.PendingInterrupt{Node: "last", Kind: graph.KindAfter}) {
			t.Fatalf("Run = %+v, %v; want interrupted after last", res, err)
		}
		snap, err := r.State(ctx, "end")
		if err != nil || snap.Status != graph.StatusInterrupted || len(snap.Next) != 0 || !slices.Equal(snap.State.Log, []string{"a", "last"}) {
			t.Fatalf("State = %+v, %v", snap, err)
		}
		res, err = r.Resume(ctx, "end")
		if err != nil || res.Status != graph.Done || res.Interrupt != nil || !slices.Equal(res.State.Log, []string{"a", "last"}) || runs != 1 {
			t.Fatalf("Resume = %+v, %v (runs %d); want done without running last again", res, err, runs)
		}
		if snap, err = r.State(ctx, "end"); err != nil || snap.Status != graph.StatusDone {
			t.Fatalf("State after resume = %+v, %v", snap, err)
		}
		if _, err := r.Resume(ctx, "end"); !errors.Is(err, graph.ErrRunDone) {
			t.Fatalf("second Resume = %v, want ErrRunDone", err)
		}
	})
}
