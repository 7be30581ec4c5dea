package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
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
	recv := receiver(b)
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

// BenchmarkSessionCalls is what one model or tool call costs the
// observer: a session of ten calls (model_call, tool_call alternating)
// and its agent_usage fed to Observe, exported to a receiver on
// 127.0.0.1. An op is one call.
func BenchmarkSessionCalls(b *testing.B) {
	recv := receiver(b)
	tr, err := Start(context.Background(), Config{Endpoint: recv.Endpoint()}, Options{Dir: b.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil || tr == nil {
		b.Fatal(tr, err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	at := time.Now()
	tr.Observe(graph.Event{Kind: graph.RunStarted, RunID: "bench", Time: at})
	tr.Observe(graph.Event{Kind: graph.NodeStarted, RunID: "bench", Node: "phased_execution", Time: at})
	custom := func(p any) {
		tr.Observe(graph.Event{Kind: graph.Custom, RunID: "bench", Node: "phased_execution", Time: at, Payload: p})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			custom(events.ModelCall{Role: "developer", Phase: 1, InputTokens: 100, OutputTokens: 10, Start: at, Duration: time.Millisecond})
		} else {
			custom(events.ToolCall{Role: "developer", Phase: 1, Tool: "run", Start: at, Duration: time.Millisecond})
		}
		if i%10 == 9 {
			custom(events.AgentUsage{Role: "developer", Model: "claude-test", InputTokens: 500, OutputTokens: 50})
		}
	}
}
