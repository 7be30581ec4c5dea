package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/otlprecv"
)

type loopState struct {
	Counter int
	Payload string
}

// BenchmarkLoopTracing is graph's BenchmarkLoop (one node incrementing
// a counter, a 2 KiB payload, looping until b.N) on a Badger store with
// the workflow's Sync durability, with tracing off and on in the same
// invocation: on, every step's node is a span exported by OTLP/HTTP to a
// receiver on 127.0.0.1 and journaled. It reports ns/step.
func BenchmarkLoopTracing(b *testing.B) {
	recv, err := otlprecv.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer recv.Close()
	for _, d := range []graph.Durability{graph.Sync, graph.Async} {
		for _, on := range []bool{false, true} {
			name := "store=badger-" + d.String() + "/tracing=off"
			if on {
				name = "store=badger-" + d.String() + "/tracing=on"
			}
			b.Run(name, func(b *testing.B) {
				store, err := badger.Open(b.TempDir(), badger.Options{SyncWrites: d == graph.Sync})
				if err != nil {
					b.Fatal(err)
				}
				defer store.Close()
				goal := b.N
				g := graph.New[loopState]().
					AddNode("inc", func(_ context.Context, s loopState) (loopState, error) { s.Counter++; return s, nil }).
					AddEdge(graph.START, "inc").
					AddConditionalEdge("inc", func(_ context.Context, s loopState) ([]string, error) {
						if s.Counter < goal {
							return []string{"inc"}, nil
						}
						return []string{graph.END}, nil
					}, "inc", graph.END)
				r, err := g.Compile(graph.WithStore(store), graph.WithDurability(d), graph.WithStepLimit(goal+1))
				if err != nil {
					b.Fatal(err)
				}
				var tr *Tracer
				if on {
					tr, err = Start(context.Background(), Config{Endpoint: recv.Endpoint()}, Options{Dir: b.TempDir(), Getenv: func(string) string { return "" }})
					if err != nil || tr == nil {
						b.Fatal(tr, err)
					}
					defer r.Subscribe(tr.Observe)()
				}
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				res, err := r.Run(context.Background(), "bench", loopState{Payload: strings.Repeat("x", 2048)})
				elapsed := time.Since(start)
				b.StopTimer()
				if err != nil || res.State.Counter != goal {
					b.Fatalf("Run = %d, %v", res.State.Counter, err)
				}
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/step")
				if tr != nil {
					if err := tr.Shutdown(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
