package graph_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
)

// wholeFan and reducedFan are the state of BenchmarkFanOutMerge, without
// and with reducers: the rounds done, the branches' results and their sum,
// a branch's item, and 2 KiB of context no branch changes.
type wholeFan struct {
	Round   int
	Results []int
	Sum     int
	Item    int
	Context string
}

type reducedFan struct {
	Round   int
	Results []int `graph:"append"`
	Sum     int   `graph:"sum"`
	Item    int
	Context string
}

const fanWays = 16

// fanRunner builds the benchmark's graph over S: each round, split starts
// a new round (and clears the results), then 16 sends of work run on a
// copy of the state with their item set, as a LangGraph user passes the
// state to Send.
func fanRunner[S any](b *testing.B, rounds int, round func(S) int, split func(S) S, withItem func(S, int) S,
	work graph.NodeFunc[S], workOpts []graph.NodeOption, opts ...graph.Option) *graph.Runner[S] {
	b.Helper()
	route := func(_ context.Context, s S) (graph.Routes[S], error) {
		if round(s) > rounds {
			return graph.Goto[S](graph.END), nil
		}
		r := graph.Routes[S]{Sends: make([]graph.Send[S], fanWays)}
		for i := range r.Sends {
			r.Sends[i] = graph.Send[S]{Node: "work", Input: withItem(s, i)}
		}
		return r, nil
	}
	g := graph.New[S]().
		AddNode("split", func(_ context.Context, s S) (S, error) { return split(s), nil }).
		AddNode("work", work, workOpts...).
		AddEdge(graph.START, "split").
		AddRoute("split", route, "work", graph.END).
		AddEdge("work", "split")
	r, err := g.Compile(append(opts, graph.WithStepLimit(2*rounds+4))...)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkFanOutMerge compares, on a 16-way Send fan-out, today's way to
// combine branches, a merge function over whole states (each branch
// returns the whole state, and the merge finds what each one appended and
// added), with per-field reducers (each branch, a Partial node, returns
// only its result and its addition). It reports ns per round (a split
// step and a fan-out step).
func BenchmarkFanOutMerge(b *testing.B) {
	ctx := context.Background()
	context2k := strings.Repeat("x", 2048)
	whole := func(b *testing.B, opts ...graph.Option) {
		work := func(_ context.Context, s wholeFan) (wholeFan, error) {
			s.Results = append(slices.Clone(s.Results), s.Item*2)
			s.Sum += s.Item * 2
			return s, nil
		}
		merge := func(_ context.Context, base wholeFan, branches []wholeFan) (wholeFan, error) {
			out := base
			out.Results = slices.Clone(base.Results)
			for _, br := range branches {
				out.Results = append(out.Results, br.Results[len(base.Results):]...)
				out.Sum += br.Sum - base.Sum
			}
			return out, nil
		}
		r := fanRunner(b, b.N,
			func(s wholeFan) int { return s.Round },
			func(s wholeFan) wholeFan { s.Round++; s.Results = nil; return s },
			func(s wholeFan, i int) wholeFan { s.Item = i; return s },
			work, nil, append(opts, graph.WithMerge(merge))...)
		runFan(b, func() (int, int, error) {
			res, err := r.Run(ctx, "bench", wholeFan{Context: context2k})
			return res.State.Sum, len(res.State.Results), err
		})
	}
	reduced := func(b *testing.B, opts ...graph.Option) {
		work := func(_ context.Context, s reducedFan) (reducedFan, error) {
			return reducedFan{Results: []int{s.Item * 2}, Sum: s.Item * 2}, nil
		}
		r := fanRunner(b, b.N,
			func(s reducedFan) int { return s.Round },
			func(s reducedFan) reducedFan { s.Round++; s.Results = nil; return s },
			func(s reducedFan, i int) reducedFan { s.Item = i; return s },
			work, []graph.NodeOption{graph.Partial()}, opts...)
		runFan(b, func() (int, int, error) {
			res, err := r.Run(ctx, "bench", reducedFan{Context: context2k})
			return res.State.Sum, len(res.State.Results), err
		})
	}
	for _, v := range []struct {
		name string
		run  func(*testing.B, ...graph.Option)
	}{{"merge=whole-state", whole}, {"merge=reducers", reduced}} {
		b.Run(v.name+"/store=none", func(b *testing.B) { v.run(b) })
		b.Run(v.name+"/store=memory", func(b *testing.B) {
			v.run(b, graph.WithStore(checkpoint.NewMemory()), graph.WithDurability(graph.Async))
		})
		b.Run(v.name+"/store=badger-async", func(b *testing.B) {
			store, err := badger.Open(b.TempDir(), badger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			v.run(b, graph.WithStore(store), graph.WithDurability(graph.Async))
		})
	}
}

// runFan times one run of b.N rounds and checks its last round.
func runFan(b *testing.B, run func() (sum, results int, err error)) {
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	sum, n, err := run()
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil || n != 0 || sum != b.N*240 {
		b.Fatalf("Run: sum %d, %d results, %v; want %d, 0 (the last split clears them)", sum, n, err, b.N*240)
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/round")
}
