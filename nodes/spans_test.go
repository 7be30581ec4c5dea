package nodes

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// TestSessionCallsAndGitWorkAreEmitted: a session's messages, as the llm
// driver streams them (a response's text, tool calls and usage, then each
// tool's result), become model_call and tool_call events timed from the
// session's start or the previous call's end; a failed tool's event says
// so without its output; git work is a git_work event with its time and
// the first line of its error.
func TestSessionCallsAndGitWorkAreEmitted(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	var tick int
	w := &workflow{cfg: Config{Clock: func() time.Time { tick++; return t0.Add(time.Duration(tick) * time.Second) }}}
	g := graph.New[int]().AddNode("work", func(ctx context.Context, n int) (int, error) {
		s := w.withMessages(ctx, agent.Session{Role: agent.RoleDeveloper, Phase: 2, Lane: 3})
		for _, m := range []agent.Message{
			{Kind: agent.Text, Text: "I will write it"},                                       // 2: the response arrives
			{Kind: agent.ToolCall, Tool: "write", Input: "a.go"},                              // 3
			{Kind: agent.ToolCall, Tool: "run", Input: "go test"},                             // 4
			{Kind: agent.UsageUpdate, Usage: state.Usage{InputTokens: 100, OutputTokens: 10}}, // 5: model call 1..2
			{Kind: agent.ToolResult, Tool: "write", Text: "ok"},                               // 6: write 5..6
			{Kind: agent.ToolResult, Tool: "run", Text: "FAIL secret-output", IsError: true},  // 7: run 6..7
			{Kind: agent.Text, Text: "done"},                                                  // 8
			{Kind: agent.UsageUpdate, Usage: state.Usage{InputTokens: 200, OutputTokens: 20}}, // 9: model call 7..8
		} {
			s.Emit(m)
		}
		err := w.gitWork(ctx, 2, 3, events.GitCommit, func() error { tick += 4; return errors.New("git commit: exit 128\nfatal: index.lock") }) // 10..15
		return n, err
	}).AddEdge(graph.START, "work").AddEdge("work", graph.END)
	r, err := g.Compile(graph.WithStore(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []any
	defer r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.Custom {
			mu.Lock()
			got = append(got, e.Payload)
			mu.Unlock()
		}
	})()
	if _, err := r.Run(context.Background(), "r1", 0); err == nil {
		t.Fatal("the node's git error did not fail it")
	}
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	want := []any{
		events.ModelCall{Role: "developer", Phase: 2, Lane: 3, InputTokens: 100, OutputTokens: 10, Start: sec(1), Duration: time.Second},
		events.ToolCall{Role: "developer", Phase: 2, Lane: 3, Tool: "write", Start: sec(5), Duration: time.Second},
		events.ToolCall{Role: "developer", Phase: 2, Lane: 3, Tool: "run", Start: sec(6), Duration: time.Second, Error: toolFailed},
		events.ModelCall{Role: "developer", Phase: 2, Lane: 3, InputTokens: 200, OutputTokens: 20, Start: sec(7), Duration: time.Second},
		events.GitWork{Phase: 2, Lane: 3, Op: events.GitCommit, Start: sec(10), Duration: 5 * time.Second, Error: "git commit: exit 128"},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("events = %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
}
