package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

func countTo(n int) *graph.Graph[trail] {
	more := func(_ context.Context, s trail) ([]string, error) {
		if s.N < n {
			return []string{"inc"}, nil
		}
		return []string{graph.END}, nil
	}
	return graph.New[trail]().
		AddNode("inc", func(_ context.Context, s trail) (trail, error) { return s.with(fmt.Sprint(s.N + 1)), nil }).
		AddEdge(graph.START, "inc").
		AddConditionalEdge("inc", more, "inc", graph.END)
}

func TestForkContinuesToTheSameEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		r := mustCompile(t, countTo(5), graph.WithStore(store))
		orig, err := r.Run(ctx, "o", trail{})
		if err != nil {
			t.Fatal(err)
		}
		hist, err := r.History(ctx, "o", 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(hist); i++ {
			if hist[i-1].Seq <= hist[i].Seq {
				t.Fatalf("History not newest first: %d then %d", hist[i-1].Seq, hist[i].Seq)
			}
		}
		if two, _ := r.History(ctx, "o", 2); len(two) != 2 || two[0].Seq != orig.Seq {
			t.Fatalf("History limit 2 = %d snapshots", len(two))
		}
		at := hist[len(hist)-3] // after step 2
		if at.Step != 2 || at.State.N != 2 {
			t.Fatalf("snapshot = %+v", at)
		}
		snap, err := r.Fork(ctx, "o", at.Seq, "f")
		if err != nil {
			t.Fatal(err)
		}
		if snap.RunID != "f" || snap.Seq != 1 || snap.State.N != 2 || snap.Meta[graph.MetaForkOf] != fmt.Sprintf("o@%d", at.Seq) {
			t.Fatalf("Fork = %+v", snap)
		}
		res, err := r.Resume(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.State.Log, orig.State.Log) || res.State.N != 5 {
			t.Fatalf("fork ended with %+v, original with %+v", res.State, orig.State)
		}
		if _, err := r.Fork(ctx, "o", at.Seq, "f"); !errors.Is(err, graph.ErrRunExists) {
			t.Fatalf("second Fork = %v, want ErrRunExists", err)
		}
		if _, err := r.Fork(ctx, "o", 99, "g"); !errors.Is(err, graph.ErrRunNotFound) {
			t.Fatalf("Fork of a missing seq = %v, want ErrRunNotFound", err)
		}
	})
}

func TestUpdateStateThenResume(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		r := mustCompile(t, countTo(5), graph.WithStore(store), graph.WithInterruptAfter("inc"))
		res, err := r.Run(ctx, "u", trail{})
		if err != nil || res.Status != graph.Interrupted || res.State.N != 1 {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		snap, err := r.UpdateState(ctx, "u", trail{N: 4, Log: []string{"edited"}}, "inc")
		if err != nil {
			t.Fatal(err)
		}
		if snap.Seq != res.Seq+1 || !slices.Equal(snap.Next, []string{"inc"}) || snap.Interrupt != nil || snap.Meta[graph.MetaAsNode] != "inc" {
			t.Fatalf("UpdateState = %+v", snap)
		}
		res, err = r.Resume(ctx, "u")
		if err != nil || res.State.N != 5 || !slices.Equal(res.State.Log, []string{"edited", "5"}) {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
		// Writing as the last node with a final state finishes the run.
		if snap, err = r.UpdateState(ctx, "u", trail{N: 9}, "inc"); err != nil || snap.Status != graph.StatusDone {
			t.Fatalf("UpdateState to the end = %+v, %v", snap, err)
		}
		if _, err := r.UpdateState(ctx, "u", trail{}, "nobody"); !errors.Is(err, graph.ErrUnknownNode) {
			t.Fatalf("UpdateState as unknown node = %v", err)
		}
	})
}

// listSpy records the limits of the List calls made on a store.
type listSpy struct {
	checkpoint.Store
	limits []int
}

func (s *listSpy) List(ctx context.Context, runID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	s.limits = append(s.limits, opts.Limit)
	return s.Store.List(ctx, runID, opts)
}

// TestEachCheckpointReadsAPageAtATime walks a 100-step run: every
// checkpoint is visited once, newest first, and no List call asks for more
// than a page, so a long run's states are never all in memory at once (a
// 600-phase run's history needed 1.9 GB when they were).
func TestEachCheckpointReadsAPageAtATime(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		ctx := context.Background()
		spy := &listSpy{Store: store}
		r := mustCompile(t, countTo(100), graph.WithStore(spy))
		if _, err := r.Run(ctx, "long", trail{}); err != nil {
			t.Fatal(err)
		}
		var seqs []uint64
		err := r.EachCheckpoint(ctx, "long", func(s graph.Snapshot[trail]) error {
			if s.State.N != int(s.Seq)-1 {
				t.Errorf("checkpoint %d has N %d", s.Seq, s.State.N)
			}
			seqs = append(seqs, s.Seq)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) != 101 || seqs[0] != 101 || !slices.IsSortedFunc(seqs, func(a, b uint64) int { return int(b) - int(a) }) || seqs[100] != 1 {
			t.Fatalf("visited %d checkpoints: %v", len(seqs), seqs)
		}
		if len(spy.limits) < 4 {
			t.Errorf("%d List calls for 101 checkpoints", len(spy.limits))
		}
		for _, l := range spy.limits {
			if l <= 0 || l > 32 {
				t.Fatalf("List limits %v: want pages of at most 32", spy.limits)
			}
		}
		stop := errors.New("stop")
		n := 0
		if err := r.EachCheckpoint(ctx, "long", func(graph.Snapshot[trail]) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Errorf("stopping walk: %v after %d", err, n)
		}
		if err := r.EachCheckpoint(ctx, "nope", func(graph.Snapshot[trail]) error { return nil }); !errors.Is(err, graph.ErrRunNotFound) {
			t.Errorf("unknown run: %v", err)
		}
	})
}
