package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// doc is the state of the summary tests: a counter and a large body that
// the summary leaves out.
type doc struct {
	N    int
	Body string
}

func docSummary(s graph.Snapshot[doc]) ([]byte, error) {
	return fmt.Appendf(nil, "n=%d next=%s", s.State.N, strings.Join(s.Next, ",")), nil
}

// summaries returns every run's summary as Store.Runs gives it.
func summaries(t *testing.T, st checkpoint.Store) map[string]string {
	t.Helper()
	runs, err := st.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range runs {
		out[r.RunID] = string(r.Summary)
	}
	return out
}

// TestSummaryFollowsTheLatestState: every checkpoint a run writes, by a
// step, an interrupt, a resume, an UpdateState or a fork, leaves the
// run's summary that of the state it holds.
func TestSummaryFollowsTheLatestState(t *testing.T) {
	ctx := context.Background()
	st := checkpoint.NewMemory()
	ask := func(ctx context.Context, s doc) (doc, error) {
		if _, err := graph.Interrupt(ctx, "go on?"); err != nil {
			return s, err
		}
		s.N += 10
		return s, nil
	}
	inc := func(_ context.Context, s doc) (doc, error) { s.N++; return s, nil }
	g := graph.New[doc]().
		AddNode("inc", inc).
		AddNode("ask", ask).
		AddEdge(graph.START, "inc").
		AddEdge("inc", "ask").
		AddEdge("ask", graph.END)
	r, err := g.Compile(graph.WithStore(st), graph.WithSummary(docSummary))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("x", 100_000)
	if res, err := r.Run(ctx, "r1", doc{Body: body}); err != nil || res.Interrupt == nil {
		t.Fatalf("Run: %+v, %v; want the interrupt", res.Status, err)
	}
	if got, want := summaries(t, st)["r1"], "n=1 next=ask"; got != want {
		t.Fatalf("summary at the interrupt = %q, want %q", got, want)
	}
	// A compiled runner of its own, as another process would have: the
	// resumed run's checkpoints carry the summary made again.
	r2, err := g.Compile(graph.WithStore(st), graph.WithSummary(docSummary))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Fork(ctx, "r1", 2, "fork"); err != nil {
		t.Fatal(err)
	}
	if got, want := summaries(t, st)["fork"], "n=1 next=ask"; got != want {
		t.Fatalf("summary of the fork = %q, want %q", got, want)
	}
	if _, err := r2.UpdateState(ctx, "fork", doc{N: 7}, "inc"); err != nil {
		t.Fatal(err)
	}
	if got, want := summaries(t, st)["fork"], "n=7 next=ask"; got != want {
		t.Fatalf("summary after UpdateState = %q, want %q", got, want)
	}
	res, err := r2.Resume(ctx, "r1", graph.WithResume(true))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summaries(t, st)["r1"], "n=11 next="; got != want || res.State.N != 11 {
		t.Fatalf("summary at the end = %q (state %d), want %q", got, res.State.N, want)
	}
	// The summary is what the store keeps in the run's index, not the
	// state: its size is the summary's.
	runs, _ := st.Runs(ctx)
	for _, ri := range runs {
		if len(ri.Summary) > 100 {
			t.Errorf("run %s: summary of %d bytes", ri.RunID, len(ri.Summary))
		}
	}
}

// TestSummaryErrorFailsTheStep: a summary that cannot be made fails the
// step that would have written it, and nothing is saved for it.
func TestSummaryErrorFailsTheStep(t *testing.T) {
	ctx := context.Background()
	st := checkpoint.NewMemory()
	bad := errors.New("no summary")
	g := graph.New[doc]().
		AddNode("inc", func(_ context.Context, s doc) (doc, error) { s.N++; return s, nil }).
		AddEdge(graph.START, "inc").
		AddEdge("inc", graph.END)
	r, err := g.Compile(graph.WithStore(st), graph.WithSummary(func(s graph.Snapshot[doc]) ([]byte, error) {
		if s.State.N > 0 {
			return nil, bad
		}
		return []byte("start"), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "r", doc{}); !errors.Is(err, bad) {
		t.Fatalf("Run: %v, want the summary's error", err)
	}
	cp, err := st.Latest(ctx, "r")
	if err != nil || cp.Seq != 1 {
		t.Fatalf("latest checkpoint: seq %d, %v; want the input's (1) only", cp.Seq, err)
	}
}

// TestSummaryOfAnotherStateType: Compile refuses a summary function of
// another state type, as it does a codec.
func TestSummaryOfAnotherStateType(t *testing.T) {
	g := graph.New[doc]().
		AddNode("inc", func(_ context.Context, s doc) (doc, error) { return s, nil }).
		AddEdge(graph.START, "inc").
		AddEdge("inc", graph.END)
	_, err := g.Compile(graph.WithStore(checkpoint.NewMemory()), graph.WithSummary(func(graph.Snapshot[int]) ([]byte, error) { return nil, nil }))
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), "summary function") {
		t.Fatalf("Compile: %v, want the summary function refused", err)
	}
}

func ExampleWithSummary() {
	ctx := context.Background()
	st := checkpoint.NewMemory()
	type task struct {
		Done  int
		Notes []string // large; a listing does not need it
	}
	work := func(_ context.Context, s task) (task, error) {
		s.Done++
		s.Notes = append(s.Notes, "a long note")
		return s, nil
	}
	g := graph.New[task]().
		AddNode("work", work).
		AddEdge(graph.START, "work").
		AddEdge("work", graph.END)
	r, _ := g.Compile(graph.WithStore(st), graph.WithSummary(func(s graph.Snapshot[task]) ([]byte, error) {
		return json.Marshal(map[string]int{"done": s.State.Done})
	}))
	if _, err := r.Run(ctx, "run-1", task{}); err != nil {
		fmt.Println(err)
		return
	}
	runs, _ := st.Runs(ctx) // reads no state
	fmt.Println(runs[0].RunID, runs[0].Status, string(runs[0].Summary))
	// Output: run-1 done {"done":1}
}
