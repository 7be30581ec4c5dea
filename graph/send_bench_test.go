package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
)

// fanState is the Send benchmark's state: the rounds done, and the sum of
// the branches' results; Item is a branch's input.
type fanState struct {
	Round int
	Sum   int
	Item  int
}

// sendRunner returns a runner whose rounds are a split step and a 16-way
// Send fan-out step of "work" branches, merged by adding their results.
func sendRunner(b *testing.B, rounds int, opts ...graph.Option) *graph.Runner[fanState] {
	b.Helper()
	const ways = 16
	split := func(_ context.Context, s fanState) (fanState, error) { return s, nil }
	work := func(_ context.Context, s fanState) (fanState, error) { return fanState{Item: s.Item * 2}, nil }
	route := func(_ context.Context, s fanState) (graph.Routes[fanState], error) {
		if s.Round >= rounds {
			return graph.Routes[fanState]{Nodes: []string{graph.END}}, nil
		}
		r := graph.Routes[fanState]{Sends: make([]graph.Send[fanState], ways)}
		for i := range r.Sends {
			r.Sends[i] = graph.Send[fanState]{Node: "work", Input: fanState{Item: i}}
		}
		return r, nil
	}
	merge := func(_ context.Context, base fanState, branches []fanState) (fanState, error) {
		out := fanState{Round: base.Round + 1, Sum: base.Sum}
		for _, br := range branches {
			out.Sum += br.Item
		}
		return out, nil
	}
	g := graph.New[fanState]().
		AddNode("split", split).
		AddNode("work", work).
		AddEdge(graph.START, "split").
		AddSendEdge("split", route, "work", graph.END).
		AddEdge("work", "split")
	r, err := g.Compile(append(opts, graph.WithMerge(merge), graph.WithStepLimit(2*rounds+2))...)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkSendFanOut runs b.N rounds of a 16-way Send fan-out (each a
// split step and a step of 16 branches with their own inputs, each saved as
// a pending write) and reports ns per fan-out round.
func BenchmarkSendFanOut(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, opts ...graph.Option) {
		r := sendRunner(b, b.N, opts...)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		res, err := r.Run(ctx, "bench", fanState{})
		elapsed := time.Since(start)
		b.StopTimer()
		if err != nil || res.State.Round != b.N || res.State.Sum != b.N*240 {
			b.Fatalf("Run = %+v, %v", res.State, err)
		}
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/round")
	}
	b.Run("ways=16/store=none", func(b *testing.B) { run(b) })
	b.Run("ways=16/store=memory", func(b *testing.B) {
		run(b, graph.WithStore(checkpoint.NewMemory()), graph.WithDurability(graph.Async))
	})
	for _, d := range []graph.Durability{graph.Async, graph.Sync} {
		b.Run("ways=16/store=badger-"+d.String(), func(b *testing.B) {
			store, err := badger.Open(b.TempDir(), badger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			run(b, graph.WithStore(store), graph.WithDurability(d))
		})
	}
}
