package graph_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// foo is the state of LangGraph's Command how-to.
type foo struct {
	Foo  string
	Pick string // which node node_a goes to (the how-to draws it at random)
}

func commandGraph(log *runLog) *graph.Graph[foo] {
	nodeA := func(ctx context.Context, s foo) (graph.Command[foo], error) {
		log.ran(ctx, "node_a")
		return graph.Command[foo]{Update: foo{Foo: "a", Pick: s.Pick}, Goto: []string{s.Pick}}, nil
	}
	nodeB := func(ctx context.Context, s foo) (foo, error) {
		log.ran(ctx, "node_b")
		s.Foo += "|b"
		return s, nil
	}
	nodeC := func(ctx context.Context, s foo) (foo, error) {
		log.ran(ctx, "node_c")
		s.Foo += "|c"
		return s, nil
	}
	// As in the how-to, there are no edges between node_a, node_b and node_c.
	return graph.New[foo]().
		AddCommandNode("node_a", nodeA, []string{"node_b", "node_c"}).
		AddNode("node_b", nodeB).
		AddNode("node_c", nodeC).
		AddEdge(graph.START, "node_a").
		AddEdge("node_b", graph.END).
		AddEdge("node_c", graph.END)
}

// TestCommandGoto reproduces LangGraph's Command how-to
// (https://langchain-ai.github.io/langgraph/how-tos/command): node_a
// returns both its update (foo = "a") and where to go; the run goes there
// with no edge declared between them, and ends with foo = "a|b" (or "a|c").
func TestCommandGoto(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		for _, pick := range []string{"node_b", "node_c"} {
			var log runLog
			r := mustCompile(t, commandGraph(&log), graph.WithStore(store))
			res, err := r.Run(context.Background(), pick, foo{Pick: pick})
			if err != nil {
				t.Fatal(err)
			}
			if want := "node_a " + pick; log.String() != want {
				t.Errorf("node runs %q, want %q", log.String(), want)
			}
			if want := "a|" + pick[len(pick)-1:]; res.State.Foo != want {
				t.Errorf("foo = %q, want %q", res.State.Foo, want)
			}
		}
	})
}

func TestCommandChecks(t *testing.T) {
	var log runLog
	// Compile: an unknown declared target.
	g := commandGraph(&log).AddCommandNode("node_d", func(context.Context, foo) (graph.Command[foo], error) {
		return graph.Command[foo]{}, nil
	}, []string{"nowhere"})
	_, err := g.Compile()
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), `command node_d -> unknown node "nowhere"`) {
		t.Fatalf("Compile = %v", err)
	}
	// Run time: a goto that was not declared.
	r := mustCompile(t, commandGraph(&log))
	_, err = r.Run(context.Background(), "r", foo{Pick: graph.START})
	if err == nil || !strings.Contains(err.Error(), `command of node_a chose "__start__", which is not a declared target [node_b node_c]`) {
		t.Fatalf("Run = %v", err)
	}
	// Run time: a command to the parent at the top level.
	top := graph.New[foo]().
		AddCommandNode("a", func(context.Context, foo) (graph.Command[foo], error) {
			return graph.Command[foo]{Goto: []string{"x"}, Parent: true}, nil
		}, nil, graph.ParentTargets("x")).
		AddEdge(graph.START, "a")
	rt := mustCompile(t, top)
	_, err = rt.Run(context.Background(), "r", foo{})
	if !errors.Is(err, graph.ErrNoParent) {
		t.Fatalf("Run = %v, want ErrNoParent", err)
	}
}

// TestCommandInFanOutSurvivesResume: a command node in a fan-out branch
// saves its goto with its pending write, so after a failure of the other
// branch it is not run again and its goto is still followed.
func TestCommandInFanOutSurvivesResume(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		var cmdRuns atomic.Int32
		var broken atomic.Bool
		broken.Store(true)
		g := graph.New[trail]().
			AddNode("split", step("split")).
			AddCommandNode("left", func(_ context.Context, s trail) (graph.Command[trail], error) {
				cmdRuns.Add(1)
				return graph.Command[trail]{Update: s.with("left"), Goto: []string{"extra"}}, nil
			}, []string{"extra"}).
			AddNode("right", func(_ context.Context, s trail) (trail, error) {
				if broken.Load() {
					return s, errors.New("right is broken")
				}
				return s.with("right"), nil
			}).
			AddNode("extra", step("extra")).
			AddEdge(graph.START, "split").
			AddEdge("split", "left").AddEdge("split", "right").
			AddEdge("right", graph.END).AddEdge("extra", graph.END)
		r := mustCompile(t, g, graph.WithStore(store), graph.WithMerge(mergeTrails))
		ctx := context.Background()
		if _, err := r.Run(ctx, "f", trail{}); err == nil {
			t.Fatal("Run succeeded with a broken branch")
		}
		broken.Store(false)
		res, err := r.Resume(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		if n := cmdRuns.Load(); n != 1 {
			t.Errorf("command node ran %d times, want 1", n)
		}
		if want := []string{"split", "left", "right", "extra"}; !slices.Equal(res.State.Log, want) {
			t.Errorf("log %v, want %v", res.State.Log, want)
		}
	})
}
