package gemini

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
)

// session is what Gemini CLI 0.61.0 printed for a session that wrote a
// file and said it was done (against a scripted generateContent server).
const session = `{"type":"init","timestamp":"2026-12-07T09:14:42.393Z","session_id":"8b5d4522-b344-43c0-8a97-a4663e45d66b","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2026-12-07T09:14:42.394Z","role":"user","content":"write a.txt"}
{"type":"message","timestamp":"2026-12-07T09:14:43.322Z","role":"assistant","content":"Writing a.txt.","delta":true}
{"type":"tool_use","timestamp":"2026-12-07T09:14:44.149Z","tool_name":"write_file","tool_id":"write_file__write_file_1796634883354_0","parameters":{"file_path":"a.txt","content":"hello\n"}}
{"type":"tool_result","timestamp":"2026-12-07T09:14:45.300Z","tool_id":"write_file__write_file_1796634883354_0","status":"success"}
{"type":"message","timestamp":"2026-12-07T09:14:45.617Z","role":"assistant","content":"Done","delta":true}
{"type":"message","timestamp":"2026-12-07T09:14:45.618Z","role":"assistant","content":".","delta":true}
{"type":"result","timestamp":"2026-12-07T09:14:45.737Z","status":"success","stats":{"total_tokens":220,"input_tokens":200,"output_tokens":20,"cached":50,"input":200,"duration_ms":3345,"tool_calls":1}}
`

// outage is what it printed when the API answered 500 (general.maxAttempts 1).
const outage = `{"type":"init","timestamp":"2026-12-07T09:20:55.421Z","session_id":"985f3f01-06ab-4f1e-ba88-323e0398a4ac","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2026-12-07T09:20:55.563Z","role":"user","content":"x"}
{"type":"result","timestamp":"2026-12-07T09:20:58.842Z","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":500,\"message\":\"the provider is down\",\"status\":\"UNAVAILABLE\"}}]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0}}
`

func TestParseSession(t *testing.T) {
	r := New().Parse([]byte(session))
	if !r.Parsed || r.IsError || r.Text != "Done." || r.SessionID != "8b5d4522-b344-43c0-8a97-a4663e45d66b" {
		t.Fatalf("result = %+v", r)
	}
	if r.Usage.InputTokens != 150 || r.Usage.CachedTokens != 50 || r.Usage.OutputTokens != 20 {
		t.Errorf("usage = %+v, want 150 in, 50 cached, 20 out", r.Usage)
	}
	kinds := []agent.MessageKind{agent.Text, agent.ToolCall, agent.ToolResult, agent.Text}
	if len(r.Messages) != len(kinds) {
		t.Fatalf("messages = %+v", r.Messages)
	}
	for i, k := range kinds {
		if r.Messages[i].Kind != k {
			t.Errorf("message %d = %+v, want kind %v", i, r.Messages[i], k)
		}
	}
	if m := r.Messages[2]; m.Tool != "write_file" || m.IsError || r.Messages[3].Text != "Done." {
		t.Errorf("messages = %+v", r.Messages)
	}
	// Streamed line by line, the same messages, and busy while the tool runs.
	p := New().Lines()
	var streamed []agent.Message
	for i, line := range strings.Split(session, "\n") {
		streamed = append(streamed, p.Messages([]byte(line))...)
		if i == 3 && p.Busy() != "write_file" {
			t.Errorf("after tool_use Busy = %q", p.Busy())
		}
		if i == 4 && p.Busy() != "" {
			t.Errorf("after tool_result Busy = %q", p.Busy())
		}
	}
	if len(streamed) != len(r.Messages) {
		t.Errorf("streamed %d messages, parsed %d", len(streamed), len(r.Messages))
	}
}

func TestParseGarbage(t *testing.T) {
	if r := New().Parse([]byte("Loaded cached credentials.\nhello\n")); r.Parsed {
		t.Errorf("garbage parsed: %+v", r)
	}
}

func TestOutage(t *testing.T) {
	v := New()
	r := v.Parse([]byte(outage))
	if !r.IsError || r.APIStatus != 500 || !strings.Contains(r.ErrText, "the provider is down") {
		t.Fatalf("result = %+v", r)
	}
	if why := v.Outage(clikit.Run{ExitCode: 244}, r); why == "" {
		t.Error("a 500 is not an outage")
	}
	for code, want := range map[string]bool{"429": true, "503": true, "400": false, "403": false} {
		text := strings.Replace(outage, `\"code\":500`, `\"code\":`+code, 1)
		r := v.Parse([]byte(text))
		if got := v.Outage(clikit.Run{ExitCode: 244}, r) != ""; got != want {
			t.Errorf("code %s: outage %v, want %v (%+v)", code, got, want, r)
		}
	}
	if why := v.Outage(clikit.Run{ExitCode: 1, Stderr: "Error when talking to Gemini API\n  status: 503\n"}, clikit.Result{}); why == "" {
		t.Error("a 503 on stderr is not an outage")
	}
	if why := v.Outage(clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, ErrText: "the tests fail"}); why != "" {
		t.Errorf("the agent's own failure is an outage: %q", why)
	}
}

func TestStateAndPrompts(t *testing.T) {
	v := New()
	if dirs, _ := v.State([]string{"HOME=/h"}); len(dirs) != 1 || dirs[0] != "/h/.gemini" {
		t.Errorf("State(HOME) = %q", dirs)
	}
	if dirs, _ := v.State([]string{"HOME=/h", "GEMINI_CLI_HOME=/g"}); len(dirs) != 1 || dirs[0] != "/g/.gemini" {
		t.Errorf("State(GEMINI_CLI_HOME) = %q", dirs)
	}
	flagged := 0
	for _, a := range v.Template().Command {
		if v.SkipsPrompts(a) != "" {
			flagged++
		}
	}
	if flagged != 1 || v.SkipsPrompts("--model=x") != "" {
		t.Errorf("the template's --yolo flagged %d times", flagged)
	}
}
