package graph_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
)

// TestConcurrentRunsOnOneBadgerStore starts 64 runs at once on one Runner
// and one real Badger store, as Runner's doc allows (concurrent use on
// different runs): every run acquires its lease, finishes and leaves its
// own checkpoints.
func TestConcurrentRunsOnOneBadgerStore(t *testing.T) {
	ctx := context.Background()
	const runs, steps = 64, 5
	store := openBadger(t)
	more := func(_ context.Context, s trail) ([]string, error) {
		if s.N < steps {
			return []string{"step"}, nil
		}
		return []string{graph.END}, nil
	}
	g := graph.New[trail]().
		AddNode("step", step("step")).
		AddEdge(graph.START, "step").
		AddConditionalEdge("step", more, "step", graph.END)
	r := mustCompile(t, g, graph.WithStore(store), graph.WithDurability(graph.Sync))
	errs := make([]error, runs)
	results := make([]graph.Result[trail], runs)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			<-start
			results[i], errs[i] = r.Run(ctx, fmt.Sprintf("run%d", i), trail{})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run%d: %v", i, err)
			continue
		}
		if res := results[i]; res.Status != graph.Done || res.State.N != steps {
			t.Errorf("run%d = %v with %d steps, want done with %d", i, res.Status, res.State.N, steps)
		}
	}
	infos, err := store.Runs(ctx)
	if err != nil || len(infos) != runs {
		t.Fatalf("Runs = %d runs, %v; want %d", len(infos), err, runs)
	}
	for _, info := range infos {
		if info.Latest != steps+1 || info.Status != graph.StatusDone {
			t.Errorf("%s: latest seq %d status %q, want %d %q", info.RunID, info.Latest, info.Status, steps+1, graph.StatusDone)
		}
	}
}
