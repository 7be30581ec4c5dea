package graph_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// runGuard is how long a test waits for a Run that must end by itself. It
// bounds a hang, and says nothing about how fast the runtime is.
const runGuard = 30 * time.Second

// runBounded runs r in the background and fails the test if it does not
// return within runGuard.
func runBounded(t *testing.T, r *graph.Runner[trail], runID string) (graph.Result[trail], error) {
	t.Helper()
	type out struct {
		res graph.Result[trail]
		err error
	}
	ch := make(chan out, 1)
	go func() {
		res, err := r.Run(context.Background(), runID, trail{})
		ch <- out{res, err}
	}()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-time.After(runGuard):
		t.Fatalf("Run did not end when the node's timeout passed: the node's late result is awaited")
		panic("unreachable")
	}
}

// assertNoLateResult fails when any checkpoint or pending write of the run
// holds the marker the abandoned attempts return.
func assertNoLateResult(t *testing.T, store checkpoint.Store, runID string) {
	t.Helper()
	ctx := context.Background()
	cps, err := store.List(ctx, runID, checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		for name, v := range cp.Values {
			if bytes.Contains(v, []byte("late")) {
				t.Errorf("checkpoint %d field %s holds the late result: %s", cp.Seq, name, v)
			}
		}
		ws, err := store.Writes(ctx, runID, cp.Seq)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if bytes.Contains(w.Value, []byte("late")) {
				t.Errorf("pending write %s on checkpoint %d holds the late result", w.TaskID, cp.Seq)
			}
		}
	}
}

// TestTimeoutAbandonsANodeThatIgnoresCtx: a node that never looks at its
// ctx still has its attempt ended by its Timeout, and what it returns later
// is dropped.
func TestTimeoutAbandonsANodeThatIgnoresCtx(t *testing.T) {
	for _, tc := range []struct {
		name     string
		blocking int32 // attempts that block until released (from the first)
		wantErr  bool
	}{
		{"gives up", 2, true},
		{"retry wins", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, store checkpoint.Store) {
				release := make(chan struct{})
				var finished sync.WaitGroup // the blocking attempts, until they return
				finished.Add(int(tc.blocking))
				var attempts atomic.Int32
				stubborn := func(_ context.Context, s trail) (trail, error) {
					if attempts.Add(1) > tc.blocking {
						return s.with("slow"), nil
					}
					defer finished.Done()
					<-release // ignores ctx: only the test ends this
					return s.with("late"), nil
				}
				g := graph.New[trail]().
					AddNode("a", step("a")).
					AddNode("slow", stubborn, graph.Timeout(20*time.Millisecond), graph.Retry(graph.RetryPolicy{MaxAttempts: 2})).
					AddEdge(graph.START, "a").AddEdge("a", "slow").AddEdge("slow", graph.END)
				r := mustCompile(t, g, graph.WithStore(store), graph.WithSleep(func(context.Context, time.Duration) error { return nil }))
				var errs []error
				var mu sync.Mutex
				r.Subscribe(func(e graph.Event) {
					if e.Kind == graph.NodeFinished && e.Node == "slow" {
						mu.Lock()
						errs = append(errs, e.Err)
						mu.Unlock()
					}
				})

				res, err := runBounded(t, r, "t")
				mu.Lock()
				if len(errs) != 2 || !errors.Is(errs[0], graph.ErrNodeTimeout) || !errors.Is(errs[0], context.DeadlineExceeded) {
					t.Errorf("attempt errors = %v, want the first to be a timeout", errs)
				}
				mu.Unlock()
				if tc.wantErr {
					var ne *graph.NodeError
					if !errors.Is(err, graph.ErrNodeTimeout) || !errors.As(err, &ne) || ne.Node != "slow" {
						t.Fatalf("Run = %+v, %v; want a NodeError for slow wrapping ErrNodeTimeout", res, err)
					}
				} else if err != nil || res.Status != graph.Done || !slices.Equal(res.State.Log, []string{"a", "slow"}) {
					t.Fatalf("Run = %+v, %v; want the second attempt's result", res, err)
				}

				close(release)
				finished.Wait() // every abandoned attempt has returned its late result
				assertNoLateResult(t, store, "t")
				latest, err := store.Latest(context.Background(), "t")
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]uint64{true: 2, false: 3}[tc.wantErr]; latest.Seq != want {
					t.Errorf("latest checkpoint = %d, want %d", latest.Seq, want)
				}
			})
		})
	}
}

// TestTimeoutInFanOutSavesNoLateWrite: a fan-out branch abandoned at its
// deadline saves no pending write, then or later; the other branch's is kept.
func TestTimeoutInFanOutSavesNoLateWrite(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		release := make(chan struct{})
		finished := make(chan struct{})
		split := func(context.Context, trail) ([]string, error) { return []string{"left", "right"}, nil }
		g := graph.New[trail]().
			AddNode("split", step("split")).
			AddNode("left", func(_ context.Context, s trail) (trail, error) {
				defer close(finished)
				<-release
				return s.with("late"), nil
			}, graph.Timeout(20*time.Millisecond)).
			AddNode("right", step("right")).
			AddNode("join", step("join")).
			AddEdge(graph.START, "split").
			AddConditionalEdge("split", split, "left", "right").
			AddEdge("left", "join").AddEdge("right", "join").AddEdge("join", graph.END)
		r := mustCompile(t, g, graph.WithStore(store), graph.WithMerge(mergeTrails))
		_, err := runBounded(t, r, "f")
		var ne *graph.NodeError
		if !errors.Is(err, graph.ErrNodeTimeout) || !errors.As(err, &ne) || ne.Node != "left" {
			t.Fatalf("Run = %v, want a NodeError for left wrapping ErrNodeTimeout", err)
		}
		close(release)
		<-finished
		assertNoLateResult(t, store, "f")
		ws, err := store.Writes(context.Background(), "f", 2)
		if err != nil || len(ws) != 1 || ws[0].Node != "right" {
			t.Fatalf("pending writes = %+v, %v; want right's only", ws, err)
		}
	})
}

// TestTimeoutDropsAnAbandonedAttemptsEvents: what an abandoned attempt
// emits after its deadline reaches no subscriber.
func TestTimeoutDropsAnAbandonedAttemptsEvents(t *testing.T) {
	release := make(chan struct{})
	finished := make(chan struct{})
	g := graph.New[trail]().
		AddNode("slow", func(ctx context.Context, s trail) (trail, error) {
			defer close(finished)
			<-release
			graph.Emit(ctx, "late", nil)
			return s.with("late"), nil
		}, graph.Timeout(20*time.Millisecond)).
		AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
	r := mustCompile(t, g)
	var mu sync.Mutex
	var custom []string
	r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.Custom {
			mu.Lock()
			custom = append(custom, e.Name)
			mu.Unlock()
		}
	})
	if _, err := runBounded(t, r, "e"); !errors.Is(err, graph.ErrNodeTimeout) {
		t.Fatalf("Run = %v, want ErrNodeTimeout", err)
	}
	close(release)
	<-finished
	mu.Lock()
	defer mu.Unlock()
	if len(custom) != 0 {
		t.Fatalf("subscribers got %v from an abandoned attempt", custom)
	}
}
