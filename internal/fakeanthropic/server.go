package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/fakeserve"
)

// Reply is the model's answer to one request.
type Reply struct {
	Text     string    // a text block, when not empty (it comes before the tool calls)
	ToolUses []ToolUse // tool_use blocks; the stop reason is then tool_use, else end_turn
	Usage    Usage     // reported in message_start and message_delta

	// Status, when not 0, makes the request fail with this HTTP status and
	// an error body of ErrorType (default "invalid_request_error") and
	// ErrorMessage.
	Status       int
	ErrorType    string
	ErrorMessage string

	// Hang accepts the request and never answers: the handler returns
	// when the client gives up or the server closes.
	Hang bool
}

// ToolUse is one tool call: Input is marshalled to JSON and streamed in
// input_json_delta pieces.
type ToolUse struct {
	ID    string // default toolu_N
	Name  string
	Input any
}

// Usage is the token count a reply reports.
type Usage struct {
	InputTokens  int
	OutputTokens int
	CacheRead    int
}

// Request is one recorded messages request.
type Request struct {
	Model    string
	Stream   bool
	System   string            // the system prompt's text blocks, joined by newlines
	Messages []json.RawMessage // the conversation as sent
	Body     []byte            // the whole request body
}

// Contains reports whether the request's messages contain s anywhere.
func (r Request) Contains(s string) bool {
	for _, m := range r.Messages {
		if strings.Contains(string(m), s) {
			return true
		}
	}
	return false
}

// HasToolResult reports whether the last message carries a tool_result
// block, that is, the model's previous tool call has been answered.
func (r Request) HasToolResult() bool {
	if len(r.Messages) == 0 {
		return false
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(r.Messages[len(r.Messages)-1], &m) != nil {
		return false
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(m.Content, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// Server is a running fake: its URL is http://127.0.0.1:PORT, for
// ANTHROPIC_BASE_URL, its Script answers every messages request, one at a
// time (SetRespond, Requests). Close it when done.
type Server struct {
	*fakeserve.Server[Request, Reply]
}

// Start listens on 127.0.0.1 and serves until Close; respond answers
// every messages request, one at a time.
func Start(respond func(Request) Reply) (*Server, error) {
	s := &Server{fakeserve.New(respond)}
	if err := s.Listen("fakeanthropic", "", http.HandlerFunc(s.serve)); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && r.URL.Path == "/"):
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		fakeserve.WriteJSON(w, http.StatusOK, map[string]int{"input_tokens": 10})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r)
	default:
		fakeserve.WriteJSON(w, http.StatusNotFound, apiError("not_found_error", "no route for "+r.Method+" "+r.URL.Path))
	}
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fakeserve.WriteJSON(w, http.StatusBadRequest, apiError("invalid_request_error", err.Error()))
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		fakeserve.WriteJSON(w, http.StatusBadRequest, apiError("invalid_request_error", err.Error()))
		return
	}
	reply, n := s.Answer(req)

	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.Status != 0 {
		typ := reply.ErrorType
		if typ == "" {
			typ = "invalid_request_error"
		}
		fakeserve.WriteJSON(w, reply.Status, apiError(typ, reply.ErrorMessage))
		return
	}
	blocks := buildBlocks(reply, n)
	stop := "end_turn"
	if len(reply.ToolUses) > 0 {
		stop = "tool_use"
	}
	msgID := fmt.Sprintf("msg_fake_%d", n)
	if !req.Stream {
		content := make([]map[string]any, len(blocks))
		for i, b := range blocks {
			content[i] = b.full()
		}
		fakeserve.WriteJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": usageJSON(reply.Usage),
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	start := usageJSON(reply.Usage)
	start["output_tokens"] = 1
	fakeserve.SSE(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start,
	}})
	fakeserve.SSE(w, "ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		fakeserve.SSE(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b.start()})
		for _, d := range b.deltas() {
			fakeserve.SSE(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		fakeserve.SSE(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	fakeserve.SSE(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": reply.Usage.OutputTokens}})
	fakeserve.SSE(w, "message_stop", map[string]any{"type": "message_stop"})
}

// block is one content block of a reply.
type block struct {
	text  string
	tool  *ToolUse
	input string // the tool's input as JSON
}

func buildBlocks(r Reply, n int) []block {
	var out []block
	if r.Text != "" {
		out = append(out, block{text: r.Text})
	}
	for i, t := range r.ToolUses {
		t := t
		if t.ID == "" {
			t.ID = fmt.Sprintf("toolu_fake_%d_%d", n, i)
		}
		in, err := json.Marshal(t.Input)
		if err != nil || t.Input == nil {
			in = []byte("{}")
		}
		out = append(out, block{tool: &t, input: string(in)})
	}
	return out
}

func (b block) start() map[string]any {
	if b.tool != nil {
		return map[string]any{"type": "tool_use", "id": b.tool.ID, "name": b.tool.Name, "input": map[string]any{}}
	}
	return map[string]any{"type": "text", "text": ""}
}

// deltas splits the block's content in two pieces, as a real stream would.
func (b block) deltas() []map[string]any {
	if b.tool != nil {
		h := len(b.input) / 2
		return []map[string]any{
			{"type": "input_json_delta", "partial_json": b.input[:h]},
			{"type": "input_json_delta", "partial_json": b.input[h:]},
		}
	}
	h := len(b.text) / 2
	for h > 0 && h < len(b.text) && b.text[h]&0xC0 == 0x80 { // keep UTF-8 sequences whole
		h--
	}
	return []map[string]any{
		{"type": "text_delta", "text": b.text[:h]},
		{"type": "text_delta", "text": b.text[h:]},
	}
}

func (b block) full() map[string]any {
	if b.tool != nil {
		return map[string]any{"type": "tool_use", "id": b.tool.ID, "name": b.tool.Name, "input": json.RawMessage(b.input)}
	}
	return map[string]any{"type": "text", "text": b.text}
}

func usageJSON(u Usage) map[string]any {
	return map[string]any{
		"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": 0,
	}
}

func parseRequest(body []byte) (Request, error) {
	var raw struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Request{}, fmt.Errorf("request body: %w", err)
	}
	return Request{Model: raw.Model, Stream: raw.Stream, System: systemText(raw.System), Messages: raw.Messages, Body: body}, nil
}

// systemText returns the system prompt, given as a string or as text blocks.
func systemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.Text
	}
	return strings.Join(parts, "\n")
}

func apiError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}
