package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// topicJoke is the state of LangGraph's streaming page.
type topicJoke struct {
	Topic string
	Joke  string
}

func topicJokeGraph(runs map[string]int) *graph.Graph[topicJoke] {
	return graph.New[topicJoke]().
		AddNode("refine_topic", func(ctx context.Context, s topicJoke) (topicJoke, error) {
			runs["refine_topic"]++
			graph.Emit(ctx, "progress", "refining")
			return topicJoke{Topic: s.Topic + " and cats", Joke: s.Joke}, nil
		}).
		AddNode("generate_joke", func(ctx context.Context, s topicJoke) (topicJoke, error) {
			runs["generate_joke"]++
			return topicJoke{Topic: s.Topic, Joke: "This is a joke about " + s.Topic}, nil
		}).
		AddEdge(graph.START, "refine_topic").
		AddEdge("refine_topic", "generate_joke").
		AddEdge("generate_joke", graph.END)
}

func showEvent(e graph.Event, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	ns := ""
	if e.Namespace != "" {
		ns = "[" + e.Namespace + "] "
	}
	switch e.Kind {
	case graph.StepValues, graph.NodeUpdate:
		return fmt.Sprintf("%s%s %s %+v", ns, e.Kind, e.Node, e.Payload)
	case graph.Custom:
		return fmt.Sprintf("%s%s %s=%v", ns, e.Kind, e.Name, e.Payload)
	case graph.CheckpointSaved:
		return fmt.Sprintf("%s%s seq=%d", ns, e.Kind, e.Seq)
	case graph.NodeStarted, graph.NodeFinished:
		return fmt.Sprintf("%s%s %s", ns, e.Kind, e.Node)
	case graph.RunFinished, graph.RunInterrupted:
		return fmt.Sprintf("%s%s %v", ns, e.Kind, e.Payload)
	}
	return ns + e.Kind.String()
}

// TestStreamModes reproduces LangGraph's streaming page
// (https://docs.langchain.com/oss/python/langgraph/streaming): in "values"
// mode the stream yields the whole state after each step, the input first;
// in "updates" mode each node's update; "custom" yields what nodes emit;
// "checkpoints" and "tasks" the checkpoints and node attempts.
func TestStreamModes(t *testing.T) {
	for _, tc := range []struct {
		modes []graph.StreamMode
		want  string
	}{
		{nil, `RunStarted
StepValues __start__ {Topic:ice cream Joke:}
StepValues refine_topic {Topic:ice cream and cats Joke:}
StepValues generate_joke {Topic:ice cream and cats Joke:This is a joke about ice cream and cats}
RunFinished done`},
		{[]graph.StreamMode{graph.StreamUpdates, graph.StreamCustom}, `RunStarted
Custom progress=refining
NodeUpdate refine_topic {Topic:ice cream and cats Joke:}
NodeUpdate generate_joke {Topic:ice cream and cats Joke:This is a joke about ice cream and cats}
RunFinished done`},
		{[]graph.StreamMode{graph.StreamCheckpoints, graph.StreamTasks}, `RunStarted
CheckpointSaved seq=1
NodeStarted refine_topic
NodeFinished refine_topic
CheckpointSaved seq=2
NodeStarted generate_joke
NodeFinished generate_joke
CheckpointSaved seq=3
RunFinished done`},
	} {
		t.Run(fmt.Sprint(tc.modes), func(t *testing.T) {
			r := mustCompile(t, topicJokeGraph(map[string]int{}), graph.WithStore(checkpoint.NewMemory()))
			var got []string
			for e, err := range r.Stream(context.Background(), "s", topicJoke{Topic: "ice cream"}, tc.modes...) {
				got = append(got, showEvent(e, err))
			}
			if g := strings.Join(got, "\n"); g != tc.want {
				t.Errorf("stream:\n%s\nwant:\n%s", g, tc.want)
			}
		})
	}
}

// TestStreamStopIsResumable: breaking out of the loop stops the run after
// the step under way, as a checkpointed KindStop interrupt; Resume goes on
// from there without running a finished node again.
func TestStreamStopIsResumable(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		runs := map[string]int{}
		r := mustCompile(t, topicJokeGraph(runs), graph.WithStore(store))
		ctx := context.Background()
		for e, err := range r.Stream(ctx, "s", topicJoke{Topic: "ice cream"}, graph.StreamUpdates) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind == graph.NodeUpdate {
				break // after refine_topic
			}
		}
		snap, err := r.State(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if snap.Status != graph.StatusInterrupted || snap.Interrupt == nil || snap.Interrupt.Kind != graph.KindStop ||
			fmt.Sprint(snap.Next) != "[generate_joke]" {
			t.Fatalf("after the stop: %+v", snap)
		}
		var got []string
		for e, err := range r.ResumeStream(ctx, "s", nil, graph.StreamUpdates) {
			got = append(got, showEvent(e, err))
		}
		want := "RunStarted\nNodeUpdate generate_joke {Topic:ice cream and cats Joke:This is a joke about ice cream and cats}\nRunFinished done"
		if g := strings.Join(got, "\n"); g != want {
			t.Errorf("resumed stream:\n%s\nwant:\n%s", g, want)
		}
		if runs["refine_topic"] != 1 || runs["generate_joke"] != 1 {
			t.Errorf("runs %v, want each node once", runs)
		}
	})
}

// TestStreamSubgraphs reproduces "stream subgraph outputs" of the same page:
// with subgraphs chosen, the child's events come with their namespace.
func TestStreamSubgraphs(t *testing.T) {
	var log runLog
	child := mustCompile(t, childGraph(&log))
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "node_2", child,
		func(p parentState) childState { return childState{Bar: p.Foo} },
		func(p parentState, c childState) parentState { return parentState{Foo: c.Bar} })
	g.AddEdge(graph.START, "node_2").AddEdge("node_2", graph.END)
	r := mustCompile(t, g, graph.WithStore(checkpoint.NewMemory()))
	var got []string
	for e, err := range r.Stream(context.Background(), "p", parentState{Foo: "foo"}, graph.StreamUpdates, graph.StreamSubgraphs) {
		got = append(got, showEvent(e, err))
	}
	want := `RunStarted
[node_2:1:0] RunStarted
[node_2:1:0] NodeUpdate subgraph_node_1 {Bar:foo Baz:baz}
[node_2:1:0] NodeUpdate subgraph_node_2 {Bar:foobaz Baz:baz}
[node_2:1:0] RunFinished done
NodeUpdate node_2 {Foo:foobaz}
RunFinished done`
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("stream:\n%s\nwant:\n%s", g, want)
	}
	// Without StreamSubgraphs the child's events stay out.
	got = nil
	for e, err := range r.Stream(context.Background(), "q", parentState{Foo: "foo"}, graph.StreamUpdates) {
		got = append(got, showEvent(e, err))
	}
	if want := "RunStarted\nNodeUpdate node_2 {Foo:foobaz}\nRunFinished done"; strings.Join(got, "\n") != want {
		t.Errorf("stream without subgraphs:\n%s", strings.Join(got, "\n"))
	}
}
