package graph_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// waitGraph is a graph of one node, wait, that closes inside when it
// starts and returns when release is closed: its run holds the lease
// meanwhile.
func waitGraph(inside, release chan struct{}) *graph.Graph[trail] {
	return graph.New[trail]().
		AddNode("wait", func(_ context.Context, s trail) (trail, error) {
			close(inside)
			<-release
			return s.with("wait"), nil
		}).
		AddEdge(graph.START, "wait").AddEdge("wait", graph.END)
}

func TestSecondWriterGetsLeaseHeldError(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	inside, release := make(chan struct{}), make(chan struct{})
	g := waitGraph(inside, release)
	first := mustCompile(t, g, graph.WithStore(store), graph.WithOwner(checkpoint.Owner{ID: "one", PID: 1, Host: "h1"}))
	second := mustCompile(t, g, graph.WithStore(store), graph.WithOwner(checkpoint.Owner{ID: "two", PID: 2, Host: "h2"}))
	done := make(chan error, 1)
	go func() {
		_, err := first.Run(ctx, "l", trail{})
		done <- err
	}()
	<-inside
	_, err := second.Resume(ctx, "l")
	var held *checkpoint.LeaseHeldError
	if !errors.As(err, &held) || held.Holder.ID != "one" {
		t.Errorf("second Resume = %v, want *checkpoint.LeaseHeldError naming owner one", err)
	}
	if _, err := second.UpdateState(ctx, "l", trail{}, "wait"); !errors.As(err, &held) {
		t.Errorf("second UpdateState = %v, want *checkpoint.LeaseHeldError", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The lease is released at the end: the second runner may now write.
	if _, err := second.UpdateState(ctx, "l", trail{N: 7}, graph.START); err != nil {
		t.Fatalf("UpdateState after release = %v", err)
	}
}

func TestExitDurabilityWritesWhenTheRunStops(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	var seen []error
	probe := func(ctx context.Context, s trail) (trail, error) {
		_, err := store.Latest(ctx, "x")
		seen = append(seen, err)
		return s.with("probe"), nil
	}
	g := graph.New[trail]().AddNode("p1", probe).AddNode("p2", probe).
		AddEdge(graph.START, "p1").AddEdge("p1", "p2").AddEdge("p2", graph.END)
	r := mustCompile(t, g, graph.WithStore(store), graph.WithDurability(graph.Exit))
	if _, err := r.Run(ctx, "x", trail{}); err != nil {
		t.Fatal(err)
	}
	for i, err := range seen {
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("node %d saw a checkpoint during an Exit-durability run: %v", i+1, err)
		}
	}
	hist, err := r.History(ctx, "x", 0)
	if err != nil || len(hist) != 3 || hist[0].Status != graph.StatusDone {
		t.Fatalf("History after the run = %d snapshots, %v", len(hist), err)
	}
}

func TestCancelledRunResumes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := checkpoint.NewMemory()
	g := graph.New[trail]().
		AddNode("a", step("a")).
		AddNode("b", func(ctx context.Context, s trail) (trail, error) {
			cancel()
			<-ctx.Done()
			return s, ctx.Err()
		}).
		AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	g2 := graph.New[trail]().
		AddNode("a", step("a")).AddNode("b", step("b")).
		AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	r := mustCompile(t, g, graph.WithStore(store), graph.WithDurability(graph.Exit))
	if _, err := r.Run(ctx, "c", trail{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	snap, err := r.State(context.Background(), "c")
	if err != nil || snap.Step != 1 || snap.Next[0] != "b" {
		t.Fatalf("State after cancel = %+v, %v (Exit durability must flush on cancel)", snap, err)
	}
	// Resume with a fixed graph of the same shape.
	res, err := mustCompile(t, g2, graph.WithStore(store)).Resume(context.Background(), "c")
	if err != nil || res.State.N != 2 {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
}

func TestResumeWithAnotherGraphFails(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	g := graph.New[trail]().AddNode("a", step("a")).AddEdge(graph.START, "a").AddEdge("a", graph.END)
	if _, err := mustCompile(t, g, graph.WithStore(store), graph.WithInterruptBefore("a")).Run(ctx, "g", trail{}); err != nil {
		t.Fatal(err)
	}
	other := graph.New[trail]().AddNode("z", step("z")).AddEdge(graph.START, "z").AddEdge("z", graph.END)
	_, err := mustCompile(t, other, graph.WithStore(store)).Resume(ctx, "g")
	var ce *graph.CheckpointError
	if !errors.Is(err, graph.ErrUnknownNode) || !errors.As(err, &ce) || ce.Seq != 1 {
		t.Fatalf("Resume = %v, want ErrUnknownNode in a CheckpointError for seq 1", err)
	}
}

func TestLostLeaseFencesTheOldWriter(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	store := checkpoint.NewMemory(checkpoint.MemoryClock(clock))
	inside, release := make(chan struct{}), make(chan struct{})
	g := waitGraph(inside, release)
	r := mustCompile(t, g, graph.WithStore(store), graph.WithLeaseTTL(time.Hour),
		graph.WithOwner(checkpoint.Owner{ID: "old", PID: 1, Host: "elsewhere"}))
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, "fence", trail{})
		done <- err
	}()
	<-inside
	mu.Lock()
	now = now.Add(2 * time.Hour) // the old writer's lease expires...
	mu.Unlock()
	if _, err := store.Acquire(ctx, "fence", checkpoint.Owner{ID: "new", PID: 2, Host: "other"}, time.Hour); err != nil {
		t.Fatal(err) // ...and a new owner takes the run
	}
	close(release)
	if err := <-done; !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("old writer's Run = %v, want checkpoint.ErrFenced", err)
	}
	snap, err := r.State(ctx, "fence")
	if err != nil || snap.Seq != 1 {
		t.Fatalf("State = %+v, %v; the fenced checkpoint must not be written", snap, err)
	}
}
