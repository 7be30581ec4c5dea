package fakeanthropic

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func start(t *testing.T, respond func(Request) Reply) *Server {
	t.Helper()
	s, err := Start(respond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestStreamedToolUse(t *testing.T) {
	s := start(t, func(r Request) Reply {
		return Reply{Text: "héllo", ToolUses: []ToolUse{{Name: "Write", Input: map[string]string{"file_path": "a", "content": "b"}}}}
	})
	resp := post(t, s, `{"model":"m","stream":true,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":"hi"}]}`)
	var events []string
	var text, input strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, ev)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(data), &raw); err != nil {
				t.Fatalf("data %q: %v", data, err)
			}
			var delta struct {
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			}
			_ = json.Unmarshal(raw["delta"], &delta)
			text.WriteString(delta.Text)
			input.WriteString(delta.PartialJSON)
		}
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !slices.Equal(events, want) {
		t.Errorf("events = %q\nwant %q", events, want)
	}
	if text.String() != "héllo" || input.String() != `{"content":"b","file_path":"a"}` {
		t.Errorf("text %q, input %q", text.String(), input.String())
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].System != "sys" || reqs[0].Model != "m" || !reqs[0].Contains(`"hi"`) || reqs[0].HasToolResult() {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestNonStreamedAndErrors(t *testing.T) {
	s := start(t, func(r Request) Reply {
		if r.HasToolResult() {
			return Reply{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "busy"}
		}
		return Reply{Text: "ok"}
	})
	resp := post(t, s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"stop_reason":"end_turn"`) || !strings.Contains(string(body), `"text":"ok"`) {
		t.Errorf("non-streamed: %d %s", resp.StatusCode, body)
	}
	resp = post(t, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"done"}]}]}`)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 529 || !strings.Contains(string(body), `"overloaded_error"`) || !strings.Contains(string(body), `"busy"`) {
		t.Errorf("error: %d %s", resp.StatusCode, body)
	}
	head, err := http.Head(s.URL + "/")
	if err != nil || head.StatusCode != 200 {
		t.Errorf("HEAD / = %v, %v", head, err)
	}
}
