package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Call is a tool call the fake model makes.
type Call struct {
	Name string
	Args string // the arguments as JSON text; for Anthropic it must be an object
}

// Turn is the answer to one request.
type Turn struct {
	Status     int    // an HTTP error status to answer with instead (429, 401, 500…); 0 answers normally
	RetryAfter string // the Retry-After header with Status
	Text       string
	Calls      []Call
	Input      int // usage: input tokens (for Anthropic: uncached)
	Output     int
	Cached     int // input tokens read from the cache
	// Hang accepts the request and never answers: the handler returns
	// when the client gives up (or the server closes).
	Hang bool
}

// Request is what the server received.
type Request struct {
	Auth        string   // the Authorization or x-api-key header
	Body        string   // the raw JSON body
	Model       string   // the model asked for
	Tools       []string // the names of the tools offered
	ToolResults []string // the contents of the tool results in the conversation, in order
	LastUser    string   // the text of the last user message, when it is plain text
	FirstUser   string   // the text of the first user message: the session's prompt
	System      string   // the system prompt, which names the agent's role
	Messages    int      // how many messages the conversation has
	// SinceUser counts the tool results after the last plain user
	// message: how far the model is into answering the latest prompt.
	SinceUser int
}

// Server is a scripted model endpoint. Its URL plus "/v1" is the base URL
// for the client.
type Server struct {
	*httptest.Server
	anthropic bool

	respond func(Request) Turn // when set, answers instead of turns

	mu       sync.Mutex
	turns    []Turn
	requests []Request
}

// NewOpenAI starts an OpenAI-compatible server playing turns.
func NewOpenAI(turns ...Turn) *Server { return start(false, turns) }

// NewAnthropic starts an Anthropic Messages server playing turns.
func NewAnthropic(turns ...Turn) *Server { return start(true, turns) }

// NewOpenAIFunc starts an OpenAI-compatible server answering each request
// with respond, called one request at a time (a workflow's roles told
// apart by Request.System).
func NewOpenAIFunc(respond func(Request) Turn) *Server { return startFunc(false, respond) }

// NewAnthropicFunc starts an Anthropic Messages server answering each
// request with respond, called one request at a time.
func NewAnthropicFunc(respond func(Request) Turn) *Server { return startFunc(true, respond) }

func startFunc(anthropic bool, respond func(Request) Turn) *Server {
	s := start(anthropic, nil)
	s.respond = respond
	return s
}

func start(anthropic bool, turns []Turn) *Server {
	s := &Server{anthropic: anthropic, turns: turns}
	mux := http.NewServeMux()
	if anthropic {
		mux.HandleFunc("POST /v1/messages", s.handle)
	} else {
		mux.HandleFunc("POST /v1/chat/completions", s.handle)
	}
	s.Server = httptest.NewServer(mux)
	return s
}

// BaseURL is the base URL to give the client.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the last request received; the zero Request when none was.
func (s *Server) Last() Request {
	rs := s.Requests()
	if len(rs) == 0 {
		return Request{}
	}
	return rs[len(rs)-1]
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := s.parse(body)
	req.Auth = r.Header.Get("Authorization")
	if s.anthropic {
		req.Auth = r.Header.Get("x-api-key")
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var t Turn
	if s.respond != nil {
		t = s.respond(req)
	} else if n < len(s.turns) {
		t = s.turns[n]
	} else {
		t = Turn{Status: http.StatusInternalServerError, Text: fmt.Sprintf("the script has %d turns; this is request %d", len(s.turns), n+1)}
	}
	s.mu.Unlock()
	if t.Hang {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if t.Status != 0 {
		if t.RetryAfter != "" {
			w.Header().Set("Retry-After", t.RetryAfter)
		}
		w.WriteHeader(t.Status)
		msg := t.Text
		if msg == "" {
			msg = http.StatusText(t.Status)
		}
		if s.anthropic {
			writeJSON(w, map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
		} else {
			writeJSON(w, map[string]any{"error": map[string]any{"message": msg, "type": "api_error"}})
		}
		return
	}
	if s.anthropic {
		writeJSON(w, anthropicAnswer(req.Model, n, t))
	} else {
		writeJSON(w, openAIAnswer(req.Model, n, t))
	}
}

func writeJSON(w io.Writer, v any) { _ = json.NewEncoder(w).Encode(v) }

func openAIAnswer(model string, n int, t Turn) map[string]any {
	msg := map[string]any{"role": "assistant", "content": t.Text}
	finish := "stop"
	if len(t.Calls) > 0 {
		var calls []map[string]any
		for i, c := range t.Calls {
			calls = append(calls, map[string]any{
				"id": fmt.Sprintf("call_%d_%d", n+1, i+1), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Args},
			})
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	return map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n+1), "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens": t.Input, "completion_tokens": t.Output, "total_tokens": t.Input + t.Output,
			"prompt_tokens_details": map[string]any{"cached_tokens": t.Cached},
		},
	}
}

func anthropicAnswer(model string, n int, t Turn) map[string]any {
	var content []any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	stop := "end_turn"
	for i, c := range t.Calls {
		content = append(content, map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n+1, i+1), "name": c.Name, "input": json.RawMessage(c.Args),
		})
		stop = "tool_use"
	}
	return map[string]any{
		"id": fmt.Sprintf("msg_%d", n+1), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop,
		"usage": map[string]any{"input_tokens": t.Input, "output_tokens": t.Output, "cache_read_input_tokens": t.Cached},
	}
}

// parse reads what the tests look at from a request body.
func (s *Server) parse(body []byte) Request {
	var in struct {
		Model  string          `json:"model"`
		System json.RawMessage `json:"system"` // Anthropic: a string or text blocks
		Tools  []struct {
			Name     string `json:"name"` // Anthropic
			Function struct {
				Name string `json:"name"`
			} `json:"function"` // OpenAI
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	req := Request{Body: string(body)}
	if err := json.Unmarshal(body, &in); err != nil {
		return req
	}
	req.Model = in.Model
	req.Messages = len(in.Messages)
	req.System = systemText(in.System)
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Name+t.Function.Name)
	}
	for _, m := range in.Messages {
		req.addMessage(m.Role, m.Content)
	}
	return req
}

// systemText is Anthropic's system prompt, a string or text blocks.
func systemText(raw json.RawMessage) string {
	var sys string
	if json.Unmarshal(raw, &sys) == nil {
		return sys
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		for _, b := range blocks {
			sys += b.Text
		}
	}
	return sys
}

// addMessage reads one message of role, whose content is a string
// (OpenAI) or blocks (Anthropic): a tool's result, the user's text, or
// more of the system prompt.
func (req *Request) addMessage(role string, content json.RawMessage) {
	var text string
	if json.Unmarshal(content, &text) == nil {
		switch role {
		case "tool":
			req.addToolResult(text)
		case "user":
			req.addUserText(text)
		case "system":
			req.System += text
		}
		return
	}
	var blocks []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Content string `json:"content"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch {
		case b.Type == "tool_result":
			req.addToolResult(b.Content)
		case role == "user" && b.Type == "text":
			req.addUserText(b.Text)
		case role == "system" && b.Type == "text":
			req.System += b.Text
		}
	}
}

// addToolResult records a tool's result, one more since the user spoke.
func (req *Request) addToolResult(text string) {
	req.ToolResults = append(req.ToolResults, text)
	req.SinceUser++
}

// addUserText records the user's text: the last, and the first if none
// came before.
func (req *Request) addUserText(text string) {
	req.LastUser, req.SinceUser = text, 0
	if req.FirstUser == "" {
		req.FirstUser = text
	}
}
