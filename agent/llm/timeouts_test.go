package llm

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

// hungServer is a provider at 127.0.0.1 that accepts connections, reads
// what it is sent and never answers, or with begin set begins an answer
// and never finishes it.
type hungServer struct {
	begin bool
	ln    net.Listener
	conns atomic.Int32
	mu    sync.Mutex
	open  []net.Conn
}

func newHungServer(t *testing.T, begin bool) *hungServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungServer{ln: ln, begin: begin}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			h.mu.Lock()
			h.open = append(h.open, c)
			h.mu.Unlock()
			go func() {
				_, _ = c.Read(make([]byte, 1<<16))
				if h.begin {
					_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"id\": \"chatcmpl-1\","))
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.open {
			c.Close()
		}
	})
	return h
}

// hungDriver is a driver of an OpenAI-compatible provider that hangs.
func hungDriver(t *testing.T, cfg Config, begin bool) (*Driver, *hungServer, *[]time.Duration) {
	t.Helper()
	h := newHungServer(t, begin)
	t.Setenv(testKeyEnv, testKey)
	var sleeps []time.Duration
	cfg.Provider, cfg.BaseURL, cfg.APIKeyEnv, cfg.Model = ProviderOpenAI, "http://"+h.ln.Addr().String()+"/v1", testKeyEnv, "test-model"
	cfg.Sleep = func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil }
	d, err := NewDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d, h, &sleeps
}

// TestLLMDriverCallTimeoutPerRole: a provider that never answers costs each
// role its own call timeout times its own attempts, then the session ends
// with agent.ErrUnavailable (the provider's fault), saying the timeout.
func TestLLMDriverCallTimeoutPerRole(t *testing.T) {
	d, h, sleeps := hungDriver(t, Config{CallTimeout: 200 * time.Millisecond, MaxAttempts: 3,
		Limits: map[agent.Role]RoleLimits{agent.RoleArchitect: {MaxAttempts: 2}}}, false)
	for _, c := range []struct {
		role     agent.Role
		attempts int
	}{{agent.RoleArchitect, 2}, {agent.RoleDeveloper, 3}} {
		before := h.conns.Load()
		*sleeps = nil
		rep, err := d.Run(context.Background(), agent.Session{Role: c.role, Prompt: "go", Dir: t.TempDir()})
		if !errors.Is(err, agent.ErrUnavailable) || rep.Status != agent.StatusFailed {
			t.Fatalf("%s: error %v, status %q; want ErrUnavailable", c.role, err, rep.Status)
		}
		if msg := err.Error(); !strings.Contains(msg, "call timeout of 200ms") || strings.Contains(msg, testKey) {
			t.Errorf("%s: error %q does not name the call timeout", c.role, msg)
		}
		if n := int(h.conns.Load() - before); n != c.attempts || len(*sleeps) != c.attempts-1 {
			t.Errorf("%s: %d calls and %d waits, want %d and %d", c.role, n, len(*sleeps), c.attempts, c.attempts-1)
		}
	}
}

// TestLLMDriverCallTimeoutMidAnswer: an answer that begins (200, part of
// the body) and never ends is no answer either: the provider's fault.
func TestLLMDriverCallTimeoutMidAnswer(t *testing.T) {
	d, h, _ := hungDriver(t, Config{CallTimeout: 200 * time.Millisecond, MaxAttempts: 2}, true)
	_, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Prompt: "go", Dir: t.TempDir()})
	if !errors.Is(err, agent.ErrUnavailable) || !strings.Contains(err.Error(), "call timeout of 200ms") {
		t.Fatalf("error %v, want ErrUnavailable naming the call timeout", err)
	}
	if n := h.conns.Load(); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

// TestLLMDriverSessionTimeoutWaitingForTheModel: the session timeout
// reached while a model call is under way is the provider's fault.
func TestLLMDriverSessionTimeoutWaitingForTheModel(t *testing.T) {
	d, _, _ := hungDriver(t, Config{CallTimeout: time.Hour,
		Limits: map[agent.Role]RoleLimits{agent.RoleReviewer: {SessionTimeout: 300 * time.Millisecond}}}, false)
	_, err := d.Run(context.Background(), agent.Session{Role: agent.RoleReviewer, Prompt: "go", Dir: t.TempDir()})
	if !errors.Is(err, agent.ErrUnavailable) || !strings.Contains(err.Error(), "limit of 300ms") {
		t.Fatalf("error %v, want ErrUnavailable naming the session limit", err)
	}
}

// TestLLMDriverSessionTimeoutInATool: the session timeout reached while
// the agent's command runs is the agent's doing: the session ends failed,
// without an error.
func TestLLMDriverSessionTimeoutInATool(t *testing.T) {
	tl := newTestLLM(t, ProviderOpenAI, Config{SessionTimeout: 500 * time.Millisecond},
		fakellm.Turn{Calls: []fakellm.Call{call("run_command", `{"command":"sleep 30"}`)}},
		fakellm.Turn{Text: "never"})
	r := tl.run(t, agent.Session{Prompt: "go", Dir: t.TempDir()})
	if r.err != nil || r.rep.Status != agent.StatusFailed || !strings.Contains(r.rep.Error, "session limit of 500ms") {
		t.Fatalf("error %v, report %+v; want a failed report naming the session limit", r.err, r.rep)
	}
	if n := len(tl.srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
}
