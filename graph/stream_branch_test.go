package graph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// lanes is the state of a parallel step whose branches finish at different
// times, as the workflow's lanes will.
type lanes struct {
	Done []string `graph:"append"`
	Lane string
}

// laneGraph sends one "lane" branch per name. The slow lane waits until
// release is closed; a lane named in failing fails.
func laneGraph(release chan struct{}, failing *atomic.Value) *graph.Graph[lanes] {
	lane := func(ctx context.Context, s lanes) (lanes, error) {
		if s.Lane == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
				return s, ctx.Err()
			}
		}
		if f, _ := failing.Load().(string); f == s.Lane {
			return s, fmt.Errorf("lane %s broke", s.Lane)
		}
		return lanes{Done: []string{s.Lane}}, nil
	}
	return graph.New[lanes]().
		AddNode("plan", func(_ context.Context, s lanes) (lanes, error) { return s, nil }).
		AddNode("lane", lane, graph.Partial()).
		AddEdge(graph.START, "plan").
		AddRoute("plan", func(_ context.Context, s lanes) (graph.Routes[lanes], error) {
			return graph.SendEach("lane", []string{"slow", "fast"}, func(n string) lanes { return lanes{Lane: n} }), nil
		}, "lane").
		AddEdge("lane", graph.END)
}

func showLaneEvent(e graph.Event) string {
	switch e.Kind {
	case graph.NodeUpdate:
		s, _ := graph.StateOf[lanes](e)
		return fmt.Sprintf("update %s#%d %v pending=%v seq=%d", e.Node, e.Branch, s.Done, e.Pending, e.Seq)
	case graph.StepValues:
		s, _ := graph.StateOf[lanes](e)
		return fmt.Sprintf("values step=%d %v seq=%d", e.Step, s.Done, e.Seq)
	case graph.CheckpointSaved:
		return fmt.Sprintf("checkpoint seq=%d", e.Seq)
	}
	return e.Kind.String()
}

// TestStreamBranchUpdatesAsTheyFinish is issue 34's streaming hazard: in a
// parallel step, a branch's update is yielded when its pending write is
// saved, marked pending, before the branches that finish later and before
// the step's checkpoint. The slow lane (branch 0) cannot finish until the
// reader has seen the fast lane's update (branch 1), so the order is
// forced, not timed.
func TestStreamBranchUpdatesAsTheyFinish(t *testing.T) {
	want := `RunStarted
checkpoint seq=1
values step=0 [] seq=1
checkpoint seq=2
update plan#0 [] pending=false seq=2
values step=1 [] seq=2
update lane#1 [fast] pending=true seq=0
update lane#0 [slow] pending=true seq=0
checkpoint seq=3
values step=2 [slow fast] seq=3
RunFinished`
	run := func(t *testing.T, want string, opts ...graph.Option) {
		release := make(chan struct{})
		var failing atomic.Value
		r := mustCompile(t, laneGraph(release, &failing), opts...)
		var got []string
		for e, err := range r.Stream(context.Background(), "s", lanes{}, graph.StreamUpdates, graph.StreamValues, graph.StreamCheckpoints) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, showLaneEvent(e))
			if e.Kind == graph.NodeUpdate && e.Node == "lane" && e.Branch == 1 {
				close(release) // the fast lane is seen: the slow one may finish
			}
		}
		if g := strings.Join(got, "\n"); g != want {
			t.Errorf("stream:\n%s\nwant:\n%s", g, want)
		}
	}
	eachStore(t, func(t *testing.T, store checkpoint.Store) { run(t, want, graph.WithStore(store)) })
	// Without a store there are no checkpoints to report; with Exit
	// durability they are reported when they are written, at the end.
	var none, exit []string
	for _, l := range strings.Split(want, "\n") {
		if !strings.HasPrefix(l, "checkpoint") {
			none = append(none, l)
			exit = append(exit, l)
		}
	}
	exit = append(exit[:len(exit)-1], "checkpoint seq=1", "checkpoint seq=2", "checkpoint seq=3", "RunFinished")
	t.Run("store=none", func(t *testing.T) { run(t, strings.Join(none, "\n")) })
	t.Run("durability=exit", func(t *testing.T) {
		run(t, strings.Join(exit, "\n"), graph.WithStore(checkpoint.NewMemory()), graph.WithDurability(graph.Exit))
	})
}

// TestStreamPendingUpdatesOnResume: when a branch fails, the update of the
// branch that finished was streamed, pending; ResumeStream yields it again,
// pending, as it loads it (it does not run again), then the rerun branch's,
// then the checkpoint. The resume options and the modes are one variadic
// list.
func TestStreamPendingUpdatesOnResume(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		release := make(chan struct{})
		close(release)
		var failing atomic.Value
		failing.Store("slow")
		r := mustCompile(t, laneGraph(release, &failing), graph.WithStore(store))
		ctx := context.Background()
		var got []string
		for e, err := range r.Stream(ctx, "s", lanes{}, graph.StreamUpdates) {
			if err != nil {
				got = append(got, "error: "+err.Error())
				continue
			}
			got = append(got, showLaneEvent(e))
		}
		want := `RunStarted
update plan#0 [] pending=false seq=2
update lane#1 [fast] pending=true seq=0
RunFinished
error: graph: node lane failed in step 2: lane slow broke`
		if g := strings.Join(got, "\n"); g != want {
			t.Errorf("failing stream:\n%s\nwant:\n%s", g, want)
		}
		failing.Store("")
		got = nil
		for e, err := range r.ResumeStream(ctx, "s", graph.StreamUpdates, nil, graph.StreamCheckpoints) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, showLaneEvent(e))
		}
		want = `RunStarted
update lane#1 [fast] pending=true seq=0
update lane#0 [slow] pending=true seq=0
checkpoint seq=3
RunFinished`
		if g := strings.Join(got, "\n"); g != want {
			t.Errorf("resumed stream:\n%s\nwant:\n%s", g, want)
		}
	})
}

// TestAsk: Ask decodes the answer into its type; an answer of another type
// fails the Resume with ErrCodec, naming the node, and a Resume with a good
// answer goes on; outside a node Ask fails.
func TestAsk(t *testing.T) {
	type order struct {
		Qty  int
		Note string
	}
	type answer struct {
		Qty  int
		Note string
		By   string // the answer's shape is its own, not the state's
	}
	g := graph.New[order]().
		AddNode("ask", func(ctx context.Context, s order) (order, error) {
			a, err := graph.Ask[answer](ctx, "how many?")
			if err != nil {
				return s, err
			}
			return order{Qty: a.Qty, Note: a.Note}, nil
		}).
		AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		r := mustCompile(t, g, graph.WithStore(store))
		ctx := context.Background()
		res, err := r.Run(ctx, "o", order{})
		if err != nil || res.Status != graph.Interrupted || string(res.Interrupt.Payload) != `"how many?"` {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		_, err = r.Resume(ctx, "o", graph.WithResume("lots"))
		if !errors.Is(err, graph.ErrCodec) || !strings.Contains(err.Error(), `the answer "lots" in node ask is not a graph_test.answer`) {
			t.Fatalf("Resume with a string = %v", err)
		}
		res, err = r.Resume(ctx, "o", graph.WithResume(answer{Qty: 3, Note: "blue"}))
		if err != nil || res.Status != graph.Done || res.State != (order{Qty: 3, Note: "blue"}) {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
	})
	if _, err := graph.Ask[int](context.Background(), "?"); err == nil {
		t.Error("Ask outside a node returned no error")
	}
}
