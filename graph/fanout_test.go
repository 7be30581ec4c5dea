package graph_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// mergeTrails adds every branch's new log entries to base, in branch order.
func mergeTrails(_ context.Context, base trail, branches []trail) (trail, error) {
	out := trail{N: base.N, Log: slices.Clone(base.Log)}
	for _, b := range branches {
		out.N += b.N - base.N
		out.Log = append(out.Log, b.Log[len(base.Log):]...)
	}
	return out, nil
}

func fanOutGraph(leftRuns *atomic.Int32, rightFails *atomic.Bool) *graph.Graph[trail] {
	split := func(context.Context, trail) ([]string, error) { return []string{"left", "right"}, nil }
	return graph.New[trail]().
		AddNode("split", step("split")).
		AddNode("left", func(ctx context.Context, s trail) (trail, error) {
			leftRuns.Add(1)
			return s.with("left"), nil
		}).
		AddNode("right", func(ctx context.Context, s trail) (trail, error) {
			if rightFails.Load() {
				return s, errors.New("right is broken")
			}
			return s.with("right"), nil
		}).
		AddNode("join", step("join")).
		AddEdge(graph.START, "split").
		AddConditionalEdge("split", split, "left", "right").
		AddEdge("left", "join").
		AddEdge("right", "join").
		AddEdge("join", graph.END)
}

func TestFanOutPendingWritesResume(t *testing.T) {
	for _, d := range []graph.Durability{graph.Sync, graph.Exit} {
		t.Run(d.String(), func(t *testing.T) {
			eachStore(t, func(t *testing.T, store checkpoint.Store) {
				ctx := context.Background()
				var leftRuns atomic.Int32
				var rightFails atomic.Bool
				rightFails.Store(true)
				r := mustCompile(t, fanOutGraph(&leftRuns, &rightFails),
					graph.WithStore(store), graph.WithMerge(mergeTrails), graph.WithDurability(d))
				_, err := r.Run(ctx, "f", trail{})
				var ne *graph.NodeError
				if !errors.As(err, &ne) || ne.Node != "right" || ne.Step != 2 {
					t.Fatalf("Run = %v, want NodeError for right in step 2", err)
				}
				ws, err := store.Writes(ctx, "f", 2)
				if err != nil || len(ws) != 1 || ws[0].Node != "left" {
					t.Fatalf("pending writes = %+v, %v; want left's", ws, err)
				}
				rightFails.Store(false)
				res, err := r.Resume(ctx, "f")
				if err != nil {
					t.Fatal(err)
				}
				if got := leftRuns.Load(); got != 1 {
					t.Errorf("left ran %d times, want 1", got)
				}
				want := []string{"split", "left", "right", "join"}
				if res.Status != graph.Done || res.State.N != 4 || !slices.Equal(res.State.Log, want) {
					t.Fatalf("result = %+v, want log %v", res, want)
				}
			})
		})
	}
}

func TestFanOutWithoutMergeFails(t *testing.T) {
	var leftRuns atomic.Int32
	var rightFails atomic.Bool
	r := mustCompile(t, fanOutGraph(&leftRuns, &rightFails))
	_, err := r.Run(context.Background(), "f", trail{})
	if !errors.Is(err, graph.ErrNoMerge) {
		t.Fatalf("Run = %v, want ErrNoMerge", err)
	}
}
