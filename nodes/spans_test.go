package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
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
	got, err := runCustom(t, func(ctx context.Context, n int) (int, error) {
		_, s := w.withMessages(ctx, nil, agent.Session{Role: agent.RoleDeveloper, Phase: 2, Lane: 3})
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
	})
	if err == nil {
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
	if len(got) != len(want) {
		t.Fatalf("events = %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// keyDriver is a driver that redacts a key as transcripts do, and whose
// sessions stream a model call that echoes the key, a tool call and its
// result, and a second model call.
type keyDriver struct{ key string }

func (d keyDriver) Redact(s string) string { return strings.ReplaceAll(s, d.key, "[redacted KEY]") }

func (d keyDriver) Run(_ context.Context, s agent.Session) (agent.Report, error) {
	for _, m := range []agent.Message{
		{Kind: agent.Text, Text: "the key is " + d.key},
		{Kind: agent.ToolCall, Tool: "run", Input: `{"command":"echo ` + d.key + `"}`},
		{Kind: agent.UsageUpdate, Usage: state.Usage{InputTokens: 10, OutputTokens: 1}},
		{Kind: agent.ToolResult, Tool: "run", Text: "printed " + d.key + strings.Repeat("x", 9<<10)},
		{Kind: agent.Text, Text: "done"},
		{Kind: agent.UsageUpdate, Usage: state.Usage{InputTokens: 20, OutputTokens: 2}},
	} {
		s.Emit(m)
	}
	return agent.Report{Status: agent.StatusCompleted}, nil
}

// plainDriver is keyDriver without Redact.
type plainDriver struct{ inner keyDriver }

func (d plainDriver) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	return d.inner.Run(ctx, s)
}

// runCustom runs node as the one node of a graph on a memory store and
// returns the payloads of the custom events it emitted, in order, and the
// run's error.
func runCustom(t *testing.T, node func(context.Context, int) (int, error)) ([]any, error) {
	t.Helper()
	g := graph.New[int]().AddNode("work", node).AddEdge(graph.START, "work").AddEdge("work", graph.END)
	r, err := g.Compile(graph.WithStore(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []any
	unsubscribe := r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.Custom {
			mu.Lock()
			got = append(got, e.Payload)
			mu.Unlock()
		}
	})
	defer unsubscribe()
	_, err = r.Run(context.Background(), "r1", 0)
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(got), err
}

// TestModelCallContent: with TraceContent and a redacting driver, each
// model_call carries what was sent since the previous call (the prompt,
// then the tool's result) and what the model answered (text and tool
// call) as gen_ai.input/output.messages JSON, the key redacted and a
// long part cut; without TraceContent, or with a driver that cannot
// redact, the events carry no content.
func TestModelCallContent(t *testing.T) {
	t.Parallel()
	const key = "sk-planted-0123456789"
	calls := func(content bool, d agent.Driver) []events.ModelCall {
		w := &workflow{cfg: Config{Clock: time.Now, TraceContent: content}}
		payloads, err := runCustom(t, func(ctx context.Context, n int) (int, error) {
			d, s := w.withMessages(ctx, d, agent.Session{Role: agent.RoleDeveloper, Phase: 1, Prompt: "Execute phase 1; the key " + key})
			_, err := d.Run(ctx, s)
			return n, err
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []events.ModelCall
		for _, p := range payloads {
			if mc, ok := p.(events.ModelCall); ok {
				got = append(got, mc)
			}
		}
		return got
	}
	got := calls(true, keyDriver{key: key})
	if len(got) != 2 {
		t.Fatalf("model calls = %+v, want 2", got)
	}
	for i, mc := range got {
		for _, js := range []string{mc.InputMessages, mc.OutputMessages} {
			if strings.Contains(js, key) {
				t.Errorf("call %d: content holds the key: %s", i, js)
			}
			var v []map[string]any
			if err := json.Unmarshal([]byte(js), &v); err != nil || len(v) == 0 {
				t.Errorf("call %d: content %q is not a JSON array of messages: %v", i, js, err)
			}
		}
	}
	var in1, out1, in2, out2 []genAIMessage
	for _, x := range []struct {
		js string
		v  *[]genAIMessage
	}{{got[0].InputMessages, &in1}, {got[0].OutputMessages, &out1}, {got[1].InputMessages, &in2}, {got[1].OutputMessages, &out2}} {
		if err := json.Unmarshal([]byte(x.js), x.v); err != nil {
			t.Fatal(err)
		}
	}
	if len(in1) != 1 || in1[0].Role != "user" || in1[0].Parts[0].Content != "Execute phase 1; the key [redacted KEY]" {
		t.Errorf("first call's input = %+v, want the prompt, redacted", in1)
	}
	if len(out1) != 1 || out1[0].Role != "assistant" || out1[0].FinishReason != "tool_call" || len(out1[0].Parts) != 2 ||
		out1[0].Parts[0].Content != "the key is [redacted KEY]" || out1[0].Parts[1].Name != "run" || !strings.Contains(out1[0].Parts[1].Arguments, "echo [redacted KEY]") {
		t.Errorf("first call's output = %+v, want its text and tool call, redacted", out1)
	}
	if len(in2) != 1 || in2[0].Role != "tool" || in2[0].Parts[0].Type != "tool_call_response" ||
		!strings.HasPrefix(in2[0].Parts[0].Response, "printed [redacted KEY]xxx") || !strings.HasSuffix(in2[0].Parts[0].Response, "bytes cut]") ||
		len(in2[0].Parts[0].Response) > maxContentText+40 {
		t.Errorf("second call's input = %+v, want the tool's result, redacted and cut", in2)
	}
	if len(out2) != 1 || out2[0].FinishReason != "stop" || out2[0].Parts[0].Content != "done" {
		t.Errorf("second call's output = %+v", out2)
	}
	for name, got := range map[string][]events.ModelCall{"off": calls(false, keyDriver{key: key}), "no redacter": calls(true, plainDriver{keyDriver{key: key}})} {
		if len(got) != 2 {
			t.Fatalf("%s: model calls = %+v, want 2", name, got)
		}
		for _, mc := range got {
			if mc.InputMessages != "" || mc.OutputMessages != "" {
				t.Errorf("%s: the model call carries content: %+v", name, mc)
			}
		}
	}
}
