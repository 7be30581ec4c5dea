package fakeserve

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// Script answers a fake's requests with a function of the request, one
// request at a time, and keeps the requests in order.
type Script[Req, Rep any] struct {
	mu      sync.Mutex
	respond func(Req) Rep
	reqs    []Req
}

// NewScript returns a script that answers with respond.
func NewScript[Req, Rep any](respond func(Req) Rep) *Script[Req, Rep] {
	return &Script[Req, Rep]{respond: respond}
}

// Answer keeps req and returns respond's reply and how many requests
// the script has answered, this one included.
func (s *Script[Req, Rep]) Answer(req Req) (Rep, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	return s.respond(req), len(s.reqs)
}

// SetRespond replaces the script: a provider that comes back.
func (s *Script[Req, Rep]) SetRespond(respond func(Req) Rep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = respond
}

// Requests returns the requests seen so far, in order.
func (s *Script[Req, Rep]) Requests() []Req {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Req(nil), s.reqs...)
}

// Server is a fake listening on 127.0.0.1, with the script that
// answers its requests. Close it when done.
type Server[Req, Rep any] struct {
	URL string // http://127.0.0.1:PORT and the path Listen was given
	srv *http.Server
	*Script[Req, Rep]
}

// New returns a fake, not listening yet, whose script answers with
// respond.
func New[Req, Rep any](respond func(Req) Rep) *Server[Req, Rep] {
	return &Server[Req, Rep]{Script: NewScript(respond)}
}

// Listen serves h on 127.0.0.1 until Close, at URL "http://" + the
// address + path. name prefixes its error.
func (s *Server[Req, Rep]) Listen(name, path string, h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.URL = "http://" + ln.Addr().String() + path
	s.srv = &http.Server{Handler: h}
	go s.srv.Serve(ln) //nolint:errcheck // returns on Close
	return nil
}

// Close stops the server.
func (s *Server[Req, Rep]) Close() error { return s.srv.Close() }

// WriteJSON answers with status and v encoded as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone
}

// SSE writes one server-sent event, named event with v as its JSON
// data, and flushes it to the client.
func SSE(w http.ResponseWriter, event string, v any) {
	data, _ := json.Marshal(v) // maps of plain values always marshal
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
