package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

type essay struct {
	Topic    string
	Essay    string
	Approved bool
}

// TestTaskNotRepeatedAfterInterrupt reproduces the functional API example
// of LangGraph (https://docs.langchain.com/oss/javascript/functional-api,
// "write_essay" then interrupt for review; and
// https://langchain-ai.github.io/langgraph/concepts/durable_execution/):
// the node writes the essay in a task, then waits for approval. Resuming
// runs the node again, but the task returns its saved essay instead of
// writing it again. Final state: the essay and approved = true.
func TestTaskNotRepeatedAfterInterrupt(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		var writes atomic.Int32
		workflow := func(ctx context.Context, s essay) (essay, error) {
			text, err := graph.Task(ctx, "write_essay", func(context.Context) (string, error) {
				writes.Add(1)
				return "An essay about topic: " + s.Topic, nil
			})
			if err != nil {
				return s, err
			}
			raw, err := graph.Interrupt(ctx, map[string]string{"essay": text, "action": "Please approve/reject the essay"})
			if err != nil {
				return s, err
			}
			var ok bool
			if err := json.Unmarshal(raw, &ok); err != nil {
				return s, err
			}
			return essay{Topic: s.Topic, Essay: text, Approved: ok}, nil
		}
		g := graph.New[essay]().AddNode("workflow", workflow).
			AddEdge(graph.START, "workflow").AddEdge("workflow", graph.END)
		r := mustCompile(t, g, graph.WithStore(store))
		ctx := context.Background()
		res, err := r.Run(ctx, "w", essay{Topic: "cat"})
		if err != nil || res.Status != graph.Interrupted {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		// A fresh runner, as after a restart.
		r2 := mustCompile(t, g, graph.WithStore(store))
		res, err = r2.Resume(ctx, "w", graph.WithResume(true))
		if err != nil {
			t.Fatal(err)
		}
		if n := writes.Load(); n != 1 {
			t.Errorf("write_essay ran %d times, want 1", n)
		}
		if want := (essay{Topic: "cat", Essay: "An essay about topic: cat", Approved: true}); res.State != want {
			t.Errorf("state %+v, want %+v", res.State, want)
		}
	})
}

// TestTaskJournalSurvivesFailure: a node whose second task fails is run
// again by Resume; the first task's result comes from the journal, the
// second (not journaled, since it failed) runs again. Calls with the same
// name are told apart by order.
func TestTaskJournalSurvivesFailure(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		calls := map[string]int{}
		var fail atomic.Bool
		fail.Store(true)
		node := func(ctx context.Context, s trail) (trail, error) {
			for i := range 2 {
				v, err := graph.Task(ctx, "charge", func(context.Context) (int, error) {
					calls[fmt.Sprint("charge", i)]++
					return 100 + i, nil
				})
				if err != nil || v != 100+i {
					return s, fmt.Errorf("charge %d = %d, %v", i, v, err)
				}
			}
			_, err := graph.Task(ctx, "ship", func(context.Context) (string, error) {
				calls["ship"]++
				if fail.Load() {
					return "", errors.New("carrier down")
				}
				return "shipped", nil
			})
			if err != nil {
				return s, err
			}
			return s.with("order"), nil
		}
		g := graph.New[trail]().AddNode("order", node).AddEdge(graph.START, "order").AddEdge("order", graph.END)
		r := mustCompile(t, g, graph.WithStore(store))
		var events []string
		r.Subscribe(func(e graph.Event) {
			switch e.Kind {
			case graph.TaskStarted, graph.TaskSaved, graph.TaskReplayed, graph.TaskFailed:
				events = append(events, e.Kind.String()+" "+e.Name)
			}
		})
		ctx := context.Background()
		if _, err := r.Run(ctx, "o", trail{}); err == nil {
			t.Fatal("Run succeeded with the carrier down")
		}
		fail.Store(false)
		res, err := r.Resume(ctx, "o")
		if err != nil {
			t.Fatal(err)
		}
		if calls["charge0"] != 1 || calls["charge1"] != 1 || calls["ship"] != 2 {
			t.Errorf("calls %v, want each charge once and ship twice", calls)
		}
		if len(res.State.Log) != 1 {
			t.Errorf("log %v", res.State.Log)
		}
		want := []string{
			"TaskStarted charge", "TaskSaved charge", "TaskStarted charge", "TaskSaved charge", "TaskStarted ship", "TaskFailed ship",
			"TaskReplayed charge", "TaskReplayed charge", "TaskStarted ship", "TaskSaved ship",
		}
		if fmt.Sprint(events) != fmt.Sprint(want) {
			t.Errorf("events\n got %v\nwant %v", events, want)
		}
	})
}

// TestTaskAcrossRetries: a node retried by its RetryPolicy does not repeat
// a task that finished in an earlier attempt, even without a store.
func TestTaskAcrossRetries(t *testing.T) {
	var calls, attempts atomic.Int32
	node := func(ctx context.Context, s trail) (trail, error) {
		if _, err := graph.Task(ctx, "call", func(context.Context) (int, error) { calls.Add(1); return 1, nil }); err != nil {
			return s, err
		}
		if attempts.Add(1) < 3 {
			return s, errors.New("flaky")
		}
		return s.with("n"), nil
	}
	g := graph.New[trail]().AddNode("n", node, graph.Retry(graph.RetryPolicy{MaxAttempts: 3})).
		AddEdge(graph.START, "n").AddEdge("n", graph.END)
	r := mustCompile(t, g, graph.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if _, err := r.Run(context.Background(), "r", trail{}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || attempts.Load() != 3 {
		t.Fatalf("task calls %d over %d attempts, want 1 over 3", calls.Load(), attempts.Load())
	}
}
