package fakeserve

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestScriptAnswersInOrderAndKeepsTheRequests: each answer comes from the
// respond of the moment and carries its number; Requests is a copy.
func TestScriptAnswersInOrderAndKeepsTheRequests(t *testing.T) {
	s := NewScript(func(req string) string { return "a:" + req })
	if rep, n := s.Answer("x"); rep != "a:x" || n != 1 {
		t.Fatalf("Answer(x) = %q, %d; want a:x, 1", rep, n)
	}
	s.SetRespond(func(req string) string { return "b:" + req })
	if rep, n := s.Answer("y"); rep != "b:y" || n != 2 {
		t.Fatalf("Answer(y) = %q, %d; want b:y, 2", rep, n)
	}
	got := s.Requests()
	if !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("Requests() = %q", got)
	}
	got[0] = "changed"
	if s.Requests()[0] != "x" {
		t.Fatal("Requests returned the script's own slice")
	}
}

// TestServerListensOnLoopback: the handler answers at URL, on
// 127.0.0.1 and under the path given, until Close.
func TestServerListensOnLoopback(t *testing.T) {
	s := New(func(req string) string { return req })
	if err := s.Listen("test", "/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.URL.Path) })); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasSuffix(s.URL, "/v1") {
		t.Fatalf("URL = %q", s.URL)
	}
	resp, err := http.Get(s.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "/v1/x" {
		t.Fatalf("body = %q", body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL + "/x"); err == nil {
		t.Fatal("the server still answers after Close")
	}
}
