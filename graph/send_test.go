package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// jokes is the state of LangGraph's map-reduce how-to: a topic, the
// subjects generated from it, one joke per subject and the best joke.
// Subject is the input of one generate_joke branch.
type jokes struct {
	Topic    string
	Subjects []string
	Subject  string
	Jokes    []string
	Best     string
}

// runLog records node runs; each step's runs are kept in step order, and
// the branches of one step sorted, since they run at once.
type runLog struct {
	mu    sync.Mutex
	steps map[int][]string
}

func (l *runLog) ran(ctx context.Context, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.steps == nil {
		l.steps = map[int][]string{}
	}
	step := graph.StepOf(ctx)
	l.steps[step] = append(l.steps[step], name)
}

func (l *runLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var keys []int
	for k := range l.steps {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		s := slices.Clone(l.steps[k])
		sort.Strings(s)
		parts = append(parts, strings.Join(s, "+"))
	}
	return strings.Join(parts, " ")
}

// mergeJokes is the reducer of Jokes (operator.add in LangGraph): every
// branch's jokes are appended to the state, in branch order.
func mergeJokes(_ context.Context, base jokes, branches []jokes) (jokes, error) {
	out := base
	out.Jokes = slices.Clone(base.Jokes)
	for _, b := range branches {
		if len(b.Jokes) > len(base.Jokes) && slices.Equal(b.Jokes[:len(base.Jokes)], base.Jokes) {
			out.Jokes = append(out.Jokes, b.Jokes[len(base.Jokes):]...) // a named node's result
		} else {
			out.Jokes = append(out.Jokes, b.Jokes...) // a send's result
		}
	}
	return out, nil
}

func mapReduceGraph(log *runLog, failing *atomic.Value) *graph.Graph[jokes] {
	topics := func(ctx context.Context, s jokes) (jokes, error) {
		log.ran(ctx, "generate_topics")
		s.Subjects = []string{"lions", "elephants", "penguins"}
		return s, nil
	}
	joke := func(ctx context.Context, s jokes) (jokes, error) {
		log.ran(ctx, "generate_joke")
		if f, _ := failing.Load().(string); f == s.Subject {
			return s, fmt.Errorf("no joke about %s today", s.Subject)
		}
		return jokes{Jokes: []string{"a joke about " + s.Subject}}, nil
	}
	best := func(ctx context.Context, s jokes) (jokes, error) {
		log.ran(ctx, "best_joke")
		s.Best = s.Jokes[1] // the how-to's model picks one; ours always picks the second
		return s, nil
	}
	continueToJokes := func(_ context.Context, s jokes) (graph.Routes[jokes], error) {
		var r graph.Routes[jokes]
		for _, subj := range s.Subjects {
			r.Sends = append(r.Sends, graph.Send[jokes]{Node: "generate_joke", Input: jokes{Subject: subj}})
		}
		return r, nil
	}
	return graph.New[jokes]().
		AddNode("generate_topics", topics).
		AddNode("generate_joke", joke).
		AddNode("best_joke", best).
		AddEdge(graph.START, "generate_topics").
		AddSendEdge("generate_topics", continueToJokes, "generate_joke").
		AddEdge("generate_joke", "best_joke").
		AddEdge("best_joke", graph.END)
}

// TestSendMapReduce reproduces LangGraph's map-reduce how-to
// (https://langchain-ai.github.io/langgraph/how-tos/map-reduce): a router
// sends generate_joke once per subject, each with its own input; the jokes
// are merged by the reducer, then best_joke runs once. Same node runs and
// same final state as the how-to: three jokes, in subject order.
func TestSendMapReduce(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		var log runLog
		var failing atomic.Value
		r := mustCompile(t, mapReduceGraph(&log, &failing), graph.WithStore(store), graph.WithMerge(mergeJokes))
		res, err := r.Run(context.Background(), "jokes", jokes{Topic: "animals"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := log.String(), "generate_topics generate_joke+generate_joke+generate_joke best_joke"; got != want {
			t.Errorf("node runs %q, want %q", got, want)
		}
		want := []string{"a joke about lions", "a joke about elephants", "a joke about penguins"}
		if !slices.Equal(res.State.Jokes, want) || res.State.Best != want[1] || res.State.Subject != "" {
			t.Errorf("final state %+v", res.State)
		}
		hist, err := r.History(context.Background(), "jokes", 0)
		if err != nil {
			t.Fatal(err)
		}
		// seq 2 has the three sends due; seq 3 ran them.
		if got := hist[len(hist)-2].Next; !slices.Equal(got, []string{"generate_joke", "generate_joke", "generate_joke"}) {
			t.Errorf("due after generate_topics: %v", got)
		}
	})
}

// TestSendFinishedBranchesKeptOnFailure fails one send; Resume runs only
// that branch again, with its own input read back from the checkpoint.
func TestSendFinishedBranchesKeptOnFailure(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		var log runLog
		var failing atomic.Value
		failing.Store("elephants")
		r := mustCompile(t, mapReduceGraph(&log, &failing), graph.WithStore(store), graph.WithMerge(mergeJokes))
		_, err := r.Run(ctx, "jokes", jokes{Topic: "animals"})
		var ne *graph.NodeError
		if !errors.As(err, &ne) || ne.Node != "generate_joke" || !strings.Contains(err.Error(), "elephants") {
			t.Fatalf("Run = %v, want the elephants branch to fail", err)
		}
		failing.Store("")
		// A fresh runner, as after a restart: the sends' inputs come from the store.
		var log2 runLog
		r2 := mustCompile(t, mapReduceGraph(&log2, &failing), graph.WithStore(store), graph.WithMerge(mergeJokes))
		res, err := r2.Resume(ctx, "jokes")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := log2.String(), "generate_joke best_joke"; got != want {
			t.Errorf("node runs on resume %q, want %q (finished branches must not run again)", got, want)
		}
		want := []string{"a joke about lions", "a joke about elephants", "a joke about penguins"}
		if !slices.Equal(res.State.Jokes, want) {
			t.Errorf("jokes %v, want %v", res.State.Jokes, want)
		}
	})
}

// TestSendWithNamedNodes: a send router may name nodes, which run on the
// step's state, beside its sends.
func TestSendWithNamedNodes(t *testing.T) {
	route := func(_ context.Context, s trail) (graph.Routes[trail], error) {
		return graph.Routes[trail]{Nodes: []string{"b"}, Sends: []graph.Send[trail]{
			{Node: "c", Input: trail{Log: []string{"x"}}}, {Node: "c", Input: trail{Log: []string{"y"}}},
		}}, nil
	}
	g := graph.New[trail]().
		AddNode("a", step("a")).AddNode("b", step("b")).AddNode("c", step("c")).
		AddEdge(graph.START, "a").
		AddSendEdge("a", route, "b", "c").
		AddEdge("b", graph.END).AddEdge("c", graph.END)
	merge := func(_ context.Context, base trail, branches []trail) (trail, error) {
		out := trail{N: base.N, Log: slices.Clone(base.Log)}
		for _, b := range branches {
			out.Log = append(out.Log, strings.Join(b.Log, "/"))
			out.N++
		}
		return out, nil
	}
	r := mustCompile(t, g, graph.WithMerge(merge))
	res, err := r.Run(context.Background(), "r", trail{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "a/b", "x/c", "y/c"}; !slices.Equal(res.State.Log, want) {
		t.Fatalf("log %v, want %v", res.State.Log, want)
	}
}

func TestSendCompileAndRuntimeChecks(t *testing.T) {
	route := func(_ context.Context, s trail) (graph.Routes[trail], error) {
		return graph.Routes[trail]{Sends: []graph.Send[trail]{{Node: "nowhere"}}}, nil
	}
	g := graph.New[trail]().
		AddNode("a", step("a")).AddNode("b", step("b")).
		AddEdge(graph.START, "a").
		AddSendEdge("a", route, "b").
		AddEdge("b", graph.END)
	_, err := g.Compile()
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), `node "a" sends without a merge function`) {
		t.Fatalf("Compile without merge = %v", err)
	}
	r := mustCompile(t, g, graph.WithMerge(mergeTrails))
	_, err = r.Run(context.Background(), "r", trail{})
	if err == nil || !strings.Contains(err.Error(), `chose "nowhere", which is not a declared target [b]`) {
		t.Fatalf("Run = %v, want an undeclared-target error", err)
	}
}
