package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

var errFlaky = errors.New("flaky")

func TestRetryBacksOffAndGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int
		retryable func(error) bool
		wantErr   bool
		wantWaits []time.Duration
	}{
		{"recovers", 3, nil, false, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}},
		{"gives up", 9, nil, true, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}},
		{"not retryable", 1, func(err error) bool { return !errors.Is(err, errFlaky) }, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			flaky := func(_ context.Context, s trail) (trail, error) {
				calls++
				if calls <= tc.failures {
					return s, fmt.Errorf("call %d: %w", calls, errFlaky)
				}
				return s.with("flaky"), nil
			}
			var waits []time.Duration
			sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			g := graph.New[trail]().
				AddNode("flaky", flaky, graph.Retry(graph.RetryPolicy{MaxAttempts: 4, Backoff: 10 * time.Millisecond, MaxBackoff: 25 * time.Millisecond, Retryable: tc.retryable})).
				AddEdge(graph.START, "flaky").AddEdge("flaky", graph.END)
			r := mustCompile(t, g, graph.WithSleep(sleep))
			var retries []int
			r.Subscribe(func(e graph.Event) {
				if e.Kind == graph.NodeRetry {
					retries = append(retries, e.Attempt)
				}
			})
			res, err := r.Run(context.Background(), "r", trail{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if tc.wantErr && !errors.Is(err, errFlaky) {
				t.Fatalf("error %v does not wrap the node's error", err)
			}
			if !slices.Equal(waits, tc.wantWaits) {
				t.Errorf("waits = %v, want %v", waits, tc.wantWaits)
			}
			if len(retries) != len(tc.wantWaits) {
				t.Errorf("NodeRetry events for attempts %v", retries)
			}
		})
	}
}

func TestTimeoutBoundsEachAttempt(t *testing.T) {
	var attempts atomic.Int32 // an abandoned attempt may run alongside the next
	slow := func(ctx context.Context, s trail) (trail, error) {
		if attempts.Add(1) == 1 {
			<-ctx.Done() // the first attempt hangs until its deadline
			return s, ctx.Err()
		}
		return s.with("slow"), nil
	}
	g := graph.New[trail]().
		AddNode("slow", slow, graph.Timeout(time.Millisecond), graph.Retry(graph.RetryPolicy{MaxAttempts: 2})).
		AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
	var errs []error
	r := mustCompile(t, g, graph.WithSleep(func(context.Context, time.Duration) error { return nil }))
	r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.NodeFinished {
			errs = append(errs, e.Err)
		}
	})
	res, err := r.Run(context.Background(), "t", trail{})
	if err != nil || res.State.N != 1 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(errs) != 2 || !errors.Is(errs[0], graph.ErrNodeTimeout) || !errors.Is(errs[0], context.DeadlineExceeded) || errs[1] != nil {
		t.Fatalf("attempt errors = %v", errs)
	}
}

func TestEventsInOrder(t *testing.T) {
	g := graph.New[trail]().
		AddNode("a", func(ctx context.Context, s trail) (trail, error) {
			graph.Emit(ctx, "progress", 50)
			return s.with("a"), nil
		}).
		AddEdge(graph.START, "a").AddEdge("a", graph.END)
	r := mustCompile(t, g, graph.WithStore(checkpoint.NewMemory()), graph.WithClock(fixedClock()))
	var got []string
	r.Subscribe(func(e graph.Event) { panic("a broken observer") })
	unsub := r.Subscribe(func(e graph.Event) {
		s := e.Kind.String()
		switch e.Kind {
		case graph.NodeStarted, graph.NodeFinished:
			s += " " + e.Node
		case graph.CheckpointSaved:
			s += fmt.Sprintf(" seq=%d", e.Seq)
		case graph.Custom:
			s += fmt.Sprintf(" %s=%v", e.Name, e.Payload)
		case graph.RunFinished:
			s += fmt.Sprintf(" %v", e.Payload)
		}
		got = append(got, s)
	})
	if _, err := r.Run(context.Background(), "e", trail{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"RunStarted", "CheckpointSaved seq=1", "NodeStarted a", "Custom progress=50",
		"NodeFinished a", "CheckpointSaved seq=2", "RunFinished done"}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	unsub()
	if _, err := r.Run(context.Background(), "e2", trail{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("unsubscribed observer still called: %q", got[len(want):])
	}
}

func TestCodecIsStrict(t *testing.T) {
	ctx := context.Background()
	store := checkpoint.NewMemory()
	g := graph.New[trail]().AddNode("a", step("a")).AddEdge(graph.START, "a").AddEdge("a", graph.END)
	r := mustCompile(t, g, graph.WithStore(store), graph.WithInterruptBefore("a"))
	if _, err := r.Run(ctx, "c", trail{}); err != nil {
		t.Fatal(err)
	}
	// A runner with a newer schema version refuses the checkpoint.
	r2 := mustCompile(t, g, graph.WithStore(store), graph.WithSchemaVersion(2))
	_, err := r2.Resume(ctx, "c")
	var ce *graph.CheckpointError
	if !errors.Is(err, graph.ErrSchemaVersion) || !errors.As(err, &ce) || ce.RunID != "c" || ce.Seq != 1 {
		t.Fatalf("Resume with schema 2 = %v, want ErrSchemaVersion naming run c seq 1", err)
	}
	// A state type without the field Log refuses it too.
	type smaller struct{ N int }
	g3 := graph.New[smaller]().AddNode("a", func(_ context.Context, s smaller) (smaller, error) { return s, nil }).
		AddEdge(graph.START, "a").AddEdge("a", graph.END)
	r3 := mustCompile(t, g3, graph.WithStore(store))
	_, err = r3.Resume(ctx, "c")
	if !errors.Is(err, graph.ErrUnknownField) || !strings.Contains(err.Error(), "run c checkpoint 1") || !strings.Contains(err.Error(), `"Log"`) {
		t.Fatalf("Resume with a smaller state = %v, want ErrUnknownField naming run, seq and field", err)
	}
}

func TestJSONCodecRoundTrip(t *testing.T) {
	type nested struct{ A, B int }
	type state struct {
		Name    string `json:"name"`
		Skip    string `json:"-"`
		Payload string
		N       nested
		List    []int
		hidden  int
	}
	c := graph.NewJSONCodec[state]()
	in := state{Name: "x", Skip: "dropped", Payload: strings.Repeat("p", 100), N: nested{1, 2}, List: []int{3}, hidden: 4}
	for i := range 3 { // the second and third encodings come from the cache
		vals, err := c.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != 4 || string(vals["name"]) != `"`+in.Name+`"` {
			t.Fatalf("values = %q", vals)
		}
		out, err := c.Decode(vals)
		want := in
		want.Skip, want.hidden = "", 0
		if err != nil || fmt.Sprint(out) != fmt.Sprint(want) {
			t.Fatalf("round %d: Decode = %+v, %v", i, out, err)
		}
		in.List = append(in.List, i)
		in.Name += "y"
	}
	vals, _ := c.Encode(in)
	vals["N"] = []byte(`{"A":1,"B":2,"C":3}`)
	if _, err := c.Decode(vals); !errors.Is(err, graph.ErrCodec) {
		t.Fatalf("nested unknown field: %v", err)
	}
	delete(vals, "N")
	if _, err := c.Decode(vals); !errors.Is(err, graph.ErrMissingField) {
		t.Fatalf("missing field: %v", err)
	}
}
