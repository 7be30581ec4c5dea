package cliagent

import (
	"slices"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/agent/cliagent/codex"
	"github.com/gaffer-dev/gaffer/state"
)

func TestParseClaudeStreamJSON(t *testing.T) {
	out := `{"type":"system","subtype":"init","session_id":"s-1","cwd":"/r","tools":["Write"]}
{"type":"assistant","message":{"content":[{"type":"text","text":"writing"},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a.txt","content":"x"}}]},"session_id":"s-1"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"File created"}]}]},"session_id":"s-1"}
{"type":"result","subtype":"success","is_error":false,"result":"all done","session_id":"s-1","num_turns":2,"total_cost_usd":0.25,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":7,"output_tokens":3}}
`
	r := parseCLIOutput(claude.Output, []byte(out))
	if !r.Parsed || r.IsError || r.Text != "all done" || r.SessionID != "s-1" || !r.CostKnown {
		t.Fatalf("result = %+v", r)
	}
	if want := (state.Usage{InputTokens: 15, OutputTokens: 3, CachedTokens: 7, CostUSD: 0.25}); r.Usage != want {
		t.Errorf("usage = %+v, want %+v", r.Usage, want)
	}
	kinds := make([]agent.MessageKind, len(r.Messages))
	for i, m := range r.Messages {
		kinds[i] = m.Kind
	}
	if want := []agent.MessageKind{agent.Text, agent.ToolCall, agent.ToolResult}; !slices.Equal(kinds, want) {
		t.Fatalf("message kinds = %v, want %v", kinds, want)
	}
	if r.Messages[1].Tool != "Write" || r.Messages[2].Tool != "Write" || r.Messages[2].Text != "File created" {
		t.Errorf("messages = %+v", r.Messages)
	}
}

func TestParseClaudeErrors(t *testing.T) {
	cases := map[string]string{
		`{"type":"result","subtype":"error_max_turns","is_error":false,"session_id":"s"}`:                "the agent reported an error (error_max_turns)",
		`{"type":"result","subtype":"error_during_execution","errors":["boom","bang"],"session_id":"s"}`: "boom\nbang",
		`{"is_error":true,"result":"API Error: 401","type":"result","subtype":"success"}`:                "API Error: 401",
	}
	for out, want := range cases {
		r := parseCLIOutput(claude.Output, []byte(out))
		if !r.Parsed || !r.IsError || r.ErrText != want {
			t.Errorf("%s: result = %+v, want error %q", out, r, want)
		}
	}
	for _, garbage := range []string{"", "not json", `{"type":"assistant"}`, `[1,2]`} {
		if r := parseCLIOutput(claude.Output, []byte(garbage)); r.Parsed {
			t.Errorf("%q parsed as a result: %+v", garbage, r)
		}
	}
}

func TestParseCodex(t *testing.T) {
	out := `{"type":"thread.started","thread_id":"th-9"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i0","type":"reasoning","text":"thinking"}}
{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"go test ./...","aggregated_output":"FAIL","exit_code":1,"status":"failed"}}
{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"a.go","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"first"}}
{"type":"item.completed","item":{"id":"i4","type":"agent_message","text":"final answer"}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":30,"output_tokens":9}}
`
	r := parseCLIOutput(codex.Output, []byte(out))
	if !r.Parsed || r.IsError || r.Text != "final answer" || r.SessionID != "th-9" || r.CostKnown {
		t.Fatalf("result = %+v", r)
	}
	if want := (state.Usage{InputTokens: 70, OutputTokens: 9, CachedTokens: 30}); r.Usage != want {
		t.Errorf("usage = %+v, want %+v", r.Usage, want)
	}
	if len(r.Messages) != 5 || r.Messages[0].Input != "go test ./..." || !r.Messages[1].IsError || r.Messages[2].Input != "update a.go" {
		t.Errorf("messages = %+v", r.Messages)
	}

	failed := `{"type":"thread.started","thread_id":"th-1"}
{"type":"error","message":"stream disconnected"}
{"type":"turn.failed","error":{"message":"quota exceeded"}}`
	if r := parseCLIOutput(codex.Output, []byte(failed)); !r.IsError || r.ErrText != "quota exceeded" || r.SessionID != "th-1" {
		t.Errorf("failed turn: %+v", r)
	}
	onlyError := `{"type":"error","message":"unauthorized"}`
	if r := parseCLIOutput(codex.Output, []byte(onlyError)); !r.IsError || r.ErrText != "unauthorized" {
		t.Errorf("error event without a turn: %+v", r)
	}
	if r := parseCLIOutput(codex.Output, []byte("hello\n")); r.Parsed {
		t.Errorf("plain text parsed as codex events: %+v", r)
	}
}

// FuzzParseCLIOutput checks that no output makes the parsers panic, and
// that an error is never reported without its text.
func FuzzParseCLIOutput(f *testing.F) {
	f.Add(`{"type":"result","is_error":true,"result":""}`)
	f.Add(`{"type":"turn.failed"}` + "\n" + `{"type":"thread.started","thread_id":"x"}`)
	f.Add("{\"type\":\"assistant\",\"message\":{\"content\":\"x\"}}\n{\"type\":\"result\"}")
	f.Fuzz(func(t *testing.T, out string) {
		for _, format := range []OutputFormat{claude.Output, codex.Output, OutputText} {
			r := parseCLIOutput(format, []byte(out))
			if r.IsError && r.ErrText == "" {
				t.Errorf("%s: error without text for %q", format, out)
			}
		}
	})
}

// parseCLIOutput reads stdout as the vendor of format f does (plain text
// for OutputText).
func parseCLIOutput(f OutputFormat, stdout []byte) clikit.Result {
	if v := byOutput(f); v != nil {
		return v.Parse(stdout)
	}
	return textVendor{}.Parse(stdout)
}
