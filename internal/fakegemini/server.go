package fakegemini

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
	Text  string // the model's text, when not empty (it comes before the calls)
	Calls []Call // function calls

	// Status, when not 0, makes the request fail with this HTTP status and
	// a Google API error body with ErrorMessage.
	Status       int
	ErrorMessage string

	// Usage is the usageMetadata reported; zero reports 100 prompt and 10
	// candidate tokens.
	PromptTokens, CandidateTokens int
}

// Call is one function call: Args is marshalled to JSON.
type Call struct {
	Name string
	Args any
}

// Request is one recorded generateContent request.
type Request struct {
	Path   string // the URL path, naming the model and the method
	APIKey string // the x-goog-api-key header
	Body   []byte // the whole request body
}

// Contains reports whether the request's body contains s.
func (r Request) Contains(s string) bool { return strings.Contains(string(r.Body), s) }

// HasFunctionResponse reports whether the request's last content carries a
// function's response (the model's earlier call came back).
func (r Request) HasFunctionResponse() bool {
	var body struct {
		Contents []struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(r.Body, &body) != nil || len(body.Contents) == 0 {
		return false
	}
	for _, p := range body.Contents[len(body.Contents)-1].Parts {
		if _, ok := p["functionResponse"]; ok {
			return true
		}
	}
	return false
}

// LastText returns the text parts of the request's last content, joined.
func (r Request) LastText() string {
	var body struct {
		Contents []struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(r.Body, &body) != nil || len(body.Contents) == 0 {
		return ""
	}
	var parts []string
	for _, p := range body.Contents[len(body.Contents)-1].Parts {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n")
}

// Server is a running fake: its URL is http://127.0.0.1:PORT, for
// GOOGLE_GEMINI_BASE_URL, its Script answers every generateContent request
// (SetRespond, Requests). Close it when done.
type Server struct {
	*fakeserve.Server[Request, Reply]
}

// Start listens on 127.0.0.1 and serves until Close; respond answers
// every generateContent request.
func Start(respond func(Request) Reply) (*Server, error) {
	s := &Server{fakeserve.New(respond)}
	if err := s.Listen("fakegemini", "", http.HandlerFunc(s.serve)); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") ||
		(!stream && !strings.HasSuffix(r.URL.Path, ":generateContent")) {
		fakeserve.WriteJSON(w, http.StatusNotFound, apiError(http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		fakeserve.WriteJSON(w, http.StatusBadRequest, apiError(http.StatusBadRequest, err.Error()))
		return
	}
	reply, _ := s.Answer(Request{Path: r.URL.Path, APIKey: r.Header.Get("x-goog-api-key"), Body: body})
	if reply.Status != 0 {
		fakeserve.WriteJSON(w, reply.Status, apiError(reply.Status, reply.ErrorMessage))
		return
	}
	resp := response(reply)
	if !stream {
		fakeserve.WriteJSON(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// response is reply as a GenerateContentResponse.
func response(reply Reply) map[string]any {
	var parts []map[string]any
	if reply.Text != "" {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for _, c := range reply.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}})
	}
	in, out := reply.PromptTokens, reply.CandidateTokens
	if in == 0 && out == 0 {
		in, out = 100, 10
	}
	return map[string]any{
		"candidates":    []map[string]any{{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out},
		"modelVersion":  "fake-gemini",
	}
}

// statusText is the Google API status of an HTTP status.
func statusText(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case code == http.StatusServiceUnavailable || code == 529:
		return "UNAVAILABLE"
	case code >= 500:
		return "INTERNAL"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "PERMISSION_DENIED"
	}
	return "INVALID_ARGUMENT"
}

func apiError(code int, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "status": statusText(code)}}
}
