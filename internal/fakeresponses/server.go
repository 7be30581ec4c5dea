package fakeresponses

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
	Text  string // an assistant message, when not empty (it comes before the calls)
	Calls []Call // function calls

	// Status, when not 0, makes the request fail with this HTTP status and
	// an OpenAI error body with ErrorMessage.
	Status       int
	ErrorMessage string

	// Hang accepts the request and never answers: the handler returns
	// when the client gives up or the server closes.
	Hang bool
}

// Call is one function call: Arguments is marshalled to JSON.
type Call struct {
	Name      string
	Arguments any
}

// Request is one recorded responses request.
type Request struct {
	Body []byte // the whole request body
}

// Contains reports whether the request's body contains s.
func (r Request) Contains(s string) bool { return strings.Contains(string(r.Body), s) }

// HasCallOutput reports whether the request carries a function call's
// output (the model's earlier call came back).
func (r Request) HasCallOutput() bool { return r.Contains(`"function_call_output"`) }

// Server is a running fake: its URL is http://127.0.0.1:PORT/v1, for a
// Codex model provider's base_url, its Script answers every responses
// request (SetRespond, Requests). Close it when done.
type Server struct {
	*fakeserve.Server[Request, Reply]
}

// Start listens on 127.0.0.1 and serves until Close; respond answers
// every responses request.
func Start(respond func(Request) Reply) (*Server, error) {
	s := &Server{fakeserve.New(respond)}
	if err := s.Listen("fakeresponses", "/v1", http.HandlerFunc(s.serve)); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		fakeserve.WriteJSON(w, http.StatusNotFound, apiError("no route for "+r.Method+" "+r.URL.Path))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		fakeserve.WriteJSON(w, http.StatusBadRequest, apiError(err.Error()))
		return
	}
	reply, n := s.Answer(Request{Body: body})
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.Status != 0 {
		fakeserve.WriteJSON(w, reply.Status, apiError(reply.ErrorMessage))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	id := fmt.Sprintf("resp_%d", n)
	fakeserve.SSE(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	var items []map[string]any
	if reply.Text != "" {
		items = append(items, map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n),
			"content": []map[string]any{{"type": "output_text", "text": reply.Text, "annotations": []any{}}}})
	}
	for i, c := range reply.Calls {
		args, _ := json.Marshal(c.Arguments)
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i),
			"call_id": fmt.Sprintf("call_%d_%d", n, i), "name": c.Name, "arguments": string(args)})
	}
	for i, it := range items {
		fakeserve.SSE(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		fakeserve.SSE(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	fakeserve.SSE(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 110}}})
}

func apiError(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}}
}
