package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/state"
)

// receiver is an httptest server that records what it is sent.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	heads  []http.Header
	fail   int // answer 503 to this many requests first
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.fail > 0 {
			r.fail--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.bodies = append(r.bodies, string(b))
		r.heads = append(r.heads, req.Header.Clone())
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() ([]string, []http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...), append([]http.Header(nil), r.heads...)
}

// runState is a run with targets and n notices in its outbox.
func runState(n int, targets ...state.NotifyTarget) state.ExecutionState {
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1", Goal: "calc"}}
	s.Config.Notify = &state.NotifyConfig{URL: "http://inbox.test/", Targets: targets}
	for i := range n {
		s = s.WithNotice(state.NoticeEvents()[i%6], time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), "title "+string(rune('a'+i)), "body")
	}
	return s
}

func start(t *testing.T, cursor string, load func() state.ExecutionState, mod func(*Config)) *Deliverer {
	t.Helper()
	cfg := Config{Cursor: cursor, Backoff: time.Millisecond, MaxDelay: 4 * time.Millisecond,
		Getenv: func(k string) string {
			if k == "HOOK_SECRET" {
				return "s3cret"
			}
			return ""
		},
		Load: func(context.Context, string) (state.ExecutionState, error) { return load(), nil },
		Runs: func(context.Context) ([]string, error) { return []string{"r-1"}, nil }}
	if mod != nil {
		mod(&cfg)
	}
	d, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWebhookSignedOncePerKeyAndNtfy(t *testing.T) {
	hook, ntfy := newReceiver(t), newReceiver(t)
	s := runState(2, state.NotifyTarget{Kind: KindWebhook, URL: hook.URL + "/hook", SecretEnv: "HOOK_SECRET"},
		state.NotifyTarget{Kind: KindNtfy, URL: ntfy.URL + "/topic", Priority: "high"})
	cursor := filepath.Join(t.TempDir(), "store.notify.json")
	d := start(t, cursor, func() state.ExecutionState { return s }, nil)
	d.Poke("r-1")
	d.Poke("r-1")
	d.Close()

	bodies, heads := hook.got()
	if len(bodies) != 2 {
		t.Fatalf("webhook got %d posts, want 2: %q", len(bodies), bodies)
	}
	for i, b := range bodies {
		if got, want := heads[i].Get(SignatureHeader), Sign([]byte("s3cret"), []byte(b)); got != want {
			t.Errorf("signature %q, want %q", got, want)
		}
		var m Message
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatal(err)
		}
		if m.Key != heads[i].Get("Idempotency-Key") || m.Key != "r-1:"+string(rune('1'+i)) || m.URL != "http://inbox.test/runs/r-1" {
			t.Errorf("message %+v, key header %q", m, heads[i].Get("Idempotency-Key"))
		}
		if strings.Contains(b, "s3cret") {
			t.Error("the secret is in the body")
		}
	}
	nb, nh := ntfy.got()
	if len(nb) != 2 || nh[0].Get("Title") != "title a" || nh[0].Get("Priority") != "high" ||
		nh[0].Get("Click") != "http://inbox.test/runs/r-1" || nh[0].Get("Tags") != state.NoticeAwaitingApproval {
		t.Fatalf("ntfy got %q %v", nb, nh)
	}

	// A second process on the same store delivers nothing again; a new
	// notice only.
	s = s.WithNotice(state.NoticeCompleted, time.Now(), "done", "")
	d = start(t, cursor, func() state.ExecutionState { return s }, nil)
	d.Close()
	if bodies, _ := hook.got(); len(bodies) != 3 {
		t.Fatalf("after a restart the webhook has %d posts, want 3", len(bodies))
	}
	b, _ := os.ReadFile(cursor)
	if strings.Contains(string(b), "s3cret") {
		t.Fatal("the secret is in the cursors' file")
	}
}

func TestRetryBacksOffAndGivesUpAtTheCap(t *testing.T) {
	hook := newReceiver(t)
	hook.fail = 1000
	s := runState(1, state.NotifyTarget{Kind: KindWebhook, URL: hook.URL})
	var logs strings.Builder
	var mu sync.Mutex
	d := start(t, filepath.Join(t.TempDir(), "c.json"), func() state.ExecutionState { return s }, func(c *Config) {
		c.Attempts = 4
		c.Logger = slogTo(&logs, &mu)
	})
	began := time.Now()
	d.Close()
	hook.mu.Lock()
	tried := 1000 - hook.fail
	hook.mu.Unlock()
	if tried != 4 {
		t.Fatalf("%d attempts, want 4", tried)
	}
	// Waits of 1, 2 and 4ms (capped at MaxDelay).
	if el := time.Since(began); el < 7*time.Millisecond {
		t.Fatalf("4 attempts took %v: no backoff", el)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "notice dropped"); n != 1 {
		t.Fatalf("%d drop lines, want 1:\n%s", n, logs.String())
	}

	// One failure, then success: delivered once.
	ok := newReceiver(t)
	ok.fail = 2
	s = runState(1, state.NotifyTarget{Kind: KindWebhook, URL: ok.URL})
	d = start(t, filepath.Join(t.TempDir(), "c.json"), func() state.ExecutionState { return s }, nil)
	d.Close()
	if b, _ := ok.got(); len(b) != 1 {
		t.Fatalf("after two failures: %d posts, want 1", len(b))
	}
}

func TestCommandGetsItsEnvironment(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	s := runState(1, state.NotifyTarget{Kind: KindCommand,
		Run: []string{"sh", "-c", `printf '%s|%s|%s|%s' "$GAFFER_EVENT" "$GAFFER_RUN" "$GAFFER_URL" "$GAFFER_TITLE" > "$0"`, out}})
	d := start(t, filepath.Join(dir, "c.json"), func() state.ExecutionState { return s }, nil)
	d.Close()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "awaiting_approval|r-1|http://inbox.test/runs/r-1|title a"; string(b) != want {
		t.Fatalf("command saw %q, want %q", b, want)
	}
}

func TestCommandIsBoundedInTime(t *testing.T) {
	s := runState(1, state.NotifyTarget{Kind: KindCommand, Run: []string{"sleep", "10"}})
	d := start(t, filepath.Join(t.TempDir(), "c.json"), func() state.ExecutionState { return s }, func(c *Config) {
		c.CommandTimeout, c.Attempts = 50*time.Millisecond, 1
	})
	began := time.Now()
	d.Close()
	if el := time.Since(began); el > 3*time.Second {
		t.Fatalf("a hanging command held delivery for %v", el)
	}
}

func TestSlackFormat(t *testing.T) {
	hook := newReceiver(t)
	s := runState(1, state.NotifyTarget{Kind: KindWebhook, URL: hook.URL, Format: FormatSlack})
	d := start(t, filepath.Join(t.TempDir(), "c.json"), func() state.ExecutionState { return s }, nil)
	d.Close()
	b, _ := hook.got()
	var m map[string]string
	if len(b) != 1 || json.Unmarshal([]byte(b[0]), &m) != nil || len(m) != 1 || !strings.HasPrefix(m["text"], "title a\nbody\nhttp://inbox.test/runs/r-1") {
		t.Fatalf("slack body %q", b)
	}
}

// A run without targets, and an ended run whose notices are all
// delivered, are read once: later pokes (every checkpoint of the run) and
// later processes (every command opening the store) do not read them.
func TestSettledRunsAreNotReadAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    func(url string) state.ExecutionState
	}{
		{"no targets", func(string) state.ExecutionState {
			s := runState(0)
			s.Config.Notify = nil
			return s
		}},
		{"ended, delivered", func(url string) state.ExecutionState {
			s := runState(2, state.NotifyTarget{Kind: "webhook", URL: url})
			s.Status = state.RunCompleted
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReceiver(t)
			cursor := filepath.Join(t.TempDir(), "notify.json")
			var mu sync.Mutex
			loads := 0
			load := func() state.ExecutionState {
				mu.Lock()
				loads++
				mu.Unlock()
				return tc.s(r.URL)
			}
			d := start(t, cursor, load, nil)
			d.Poke("r-1")
			d.Poke("r-1")
			d.Close()
			d = start(t, cursor, load, nil) // the next process: Runs lists r-1 again
			d.Poke("r-1")
			d.Close()
			mu.Lock()
			defer mu.Unlock()
			if loads != 1 {
				t.Fatalf("the run was read %d times, want once", loads)
			}
			if bodies, _ := r.got(); tc.name == "ended, delivered" && len(bodies) != 2 {
				t.Fatalf("delivered %d notices, want 2", len(bodies))
			}
		})
	}
}
