package fakeserve

import (
	"io"
	"net/http"
	"slices"
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

// TestListenServesOnLoopback: the handler answers on 127.0.0.1 until Close.
func TestListenServesOnLoopback(t *testing.T) {
	srv, addr, err := Listen("test", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("body = %q", body)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/"); err == nil {
		t.Fatal("the server still answers after Close")
	}
}
