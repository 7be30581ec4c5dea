package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/state"
)

// testKey is the API key the tests put in the environment; it must never
// come back in a message, a report or an error.
const (
	testKey    = "sk-test-0123456789abcdef"
	testKeyEnv = "GAFFER_TEST_LLM_KEY" // not named like a secret, so only the driver keeps it from commands
)

// llmRun is what one session gave back.
type llmRun struct {
	rep  agent.Report
	msgs []agent.Message
	err  error
}

// texts returns everything of r a key could leak into.
func (r llmRun) texts() []string {
	out := []string{r.rep.Summary, r.rep.Output, r.rep.Error, r.rep.SessionID}
	if r.err != nil {
		out = append(out, r.err.Error())
	}
	for _, m := range r.msgs {
		out = append(out, m.Text, m.Input)
	}
	return out
}

// results returns the texts of the tool results streamed.
func (r llmRun) results() []agent.Message {
	var out []agent.Message
	for _, m := range r.msgs {
		if m.Kind == agent.ToolResult {
			out = append(out, m)
		}
	}
	return out
}

// testLLM is a driver talking to a fake server, with the waits it slept.
type testLLM struct {
	d      *Driver
	srv    *fakellm.Server
	sleeps []time.Duration
}

// newTestLLM starts a fake server of provider p playing turns, and a driver
// for it configured by cfg (Provider, BaseURL, key and Sleep are filled in).
func newTestLLM(t *testing.T, p Provider, cfg Config, turns ...fakellm.Turn) *testLLM {
	t.Helper()
	tl := &testLLM{}
	if p == ProviderAnthropic {
		tl.srv = fakellm.NewAnthropic(turns...)
	} else {
		tl.srv = fakellm.NewOpenAI(turns...)
	}
	t.Cleanup(tl.srv.Close)
	t.Setenv(testKeyEnv, testKey)
	cfg.Provider, cfg.BaseURL, cfg.APIKeyEnv = p, tl.srv.BaseURL(), testKeyEnv
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	cfg.HTTPClient = tl.srv.Client()
	cfg.Sleep = func(_ context.Context, d time.Duration) error { tl.sleeps = append(tl.sleeps, d); return nil }
	d, err := NewDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tl.d = d
	return tl
}

// run runs s and checks the key leaked nowhere.
func (tl *testLLM) run(t *testing.T, s agent.Session) llmRun {
	t.Helper()
	var r llmRun
	s.OnMessage = func(m agent.Message) { r.msgs = append(r.msgs, m) }
	if s.Role == "" {
		s.Role = agent.RoleDeveloper
	}
	r.rep, r.err = tl.d.Run(context.Background(), s)
	for _, text := range r.texts() {
		if strings.Contains(text, testKey) {
			t.Fatalf("the API key leaked: %q", text)
		}
	}
	return r
}

// call builds a fake tool call.
func call(name, args string) fakellm.Call { return fakellm.Call{Name: name, Args: args} }

func TestLLMDriverToolLoop(t *testing.T) {
	for _, p := range []Provider{ProviderOpenAI, ProviderAnthropic} {
		t.Run(string(p), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "hello.go"), []byte("package hello\n\n// Greeting is said.\nconst Greeting = \"Hello\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tl := newTestLLM(t, p, Config{Prices: map[string]state.Price{"test-model": {Input: 3, Output: 15, Cached: 0.3}}},
				fakellm.Turn{Text: "Let me look.", Calls: []fakellm.Call{
					call("list_files", `{"pattern":"**/*.go"}`),
					call("read_file", `{"path":"hello.go","start_line":4,"end_line":4}`),
				}, Input: 1000, Output: 50, Cached: 200},
				fakellm.Turn{Calls: []fakellm.Call{
					call("edit_file", `{"path":"hello.go","old_text":"\"Hello\"","new_text":"\"Hi\""}`),
					call("write_file", `{"path":"sub/new.txt","content":"made by the agent\n"}`),
					call("grep", `{"pattern":"Gree?ting","glob":"*.go"}`),
				}, Input: 1500, Output: 80},
				fakellm.Turn{Calls: []fakellm.Call{
					call("run_command", `{"command":"test -f sub/new.txt && grep -q Hi hello.go && echo checked"}`),
				}, Input: 1700, Output: 20},
				fakellm.Turn{Text: "Changed the greeting to Hi and added sub/new.txt.", Input: 1800, Output: 30, Cached: 1000},
			)
			r := tl.run(t, agent.Session{RunID: "r1", Phase: 1, Attempt: 1, Prompt: "Say hi.", Dir: dir})
			if r.err != nil || r.rep.Status != agent.StatusCompleted {
				t.Fatalf("run: %v, report %+v", r.err, r.rep)
			}
			if got := testkit.ReadFile(t, filepath.Join(dir, "hello.go")); !strings.Contains(got, `const Greeting = "Hi"`) {
				t.Errorf("hello.go not edited:\n%s", got)
			}
			if got := testkit.ReadFile(t, filepath.Join(dir, "sub", "new.txt")); got != "made by the agent\n" {
				t.Errorf("sub/new.txt = %q", got)
			}
			if want := []string{"hello.go", "sub/new.txt"}; !slices.Equal(r.rep.FilesChanged, want) {
				t.Errorf("FilesChanged = %v, want %v", r.rep.FilesChanged, want)
			}
			if r.rep.Output != "Changed the greeting to Hi and added sub/new.txt." || r.rep.SessionID == "" {
				t.Errorf("Output %q, SessionID %q", r.rep.Output, r.rep.SessionID)
			}
			// The model saw every tool's result.
			res := tl.srv.Last().ToolResults
			wantRes := []string{"hello.go\n", "const Greeting = \"Hello\"\n", "edited hello.go", "wrote 18 bytes to sub/new.txt",
				"hello.go:3: // Greeting is said.\nhello.go:4: const Greeting = \"Hi\"\n", "exit code 0\nchecked\n"}
			if !slices.Equal(res, wantRes) {
				t.Errorf("tool results the model got:\n%q\nwant\n%q", res, wantRes)
			}
			var kinds []string
			for _, m := range r.msgs {
				kinds = append(kinds, m.Kind.String()+":"+m.Tool)
			}
			wantKinds := []string{"text:", "tool_call:list_files", "tool_call:read_file", "usage:", "tool_result:list_files", "tool_result:read_file",
				"tool_call:edit_file", "tool_call:write_file", "tool_call:grep", "usage:", "tool_result:edit_file", "tool_result:write_file", "tool_result:grep",
				"tool_call:run_command", "usage:", "tool_result:run_command", "text:", "usage:"}
			if !slices.Equal(kinds, wantKinds) {
				t.Errorf("messages:\n%v\nwant\n%v", kinds, wantKinds)
			}
			// Usage per call and in total; Anthropic's input_tokens leave out the cache.
			want := state.Usage{InputTokens: 6000, OutputTokens: 180, CachedTokens: 1200}
			if p == ProviderAnthropic {
				want.InputTokens += 1200
			}
			uncached := float64(want.InputTokens - want.CachedTokens)
			want.CostUSD = (uncached*3 + 1200*0.3 + 180*15) / 1e6
			got := r.rep.Usage
			if math.Abs(got.CostUSD-want.CostUSD) > 1e-12 {
				t.Errorf("cost %v, want %v", got.CostUSD, want.CostUSD)
			}
			got.CostUSD, want.CostUSD = 0, 0
			if got != want {
				t.Errorf("usage %+v, want %+v", got, want)
			}
			var sum state.Usage
			for _, m := range r.msgs {
				sum = sum.Add(m.Usage)
			}
			if sum.InputTokens != r.rep.Usage.InputTokens || math.Abs(sum.CostUSD-r.rep.Usage.CostUSD) > 1e-12 {
				t.Errorf("streamed usage %+v does not add up to the report's %+v", sum, r.rep.Usage)
			}
			last := tl.srv.Last()
			wantAuth := testKey
			if p == ProviderOpenAI {
				wantAuth = "Bearer " + testKey
			}
			if last.Auth != wantAuth || last.Model != "test-model" || len(tl.srv.Requests()) != 4 {
				t.Errorf("auth %q, model %q, %d requests", last.Auth, last.Model, len(tl.srv.Requests()))
			}
		})
	}
}

func TestLLMDriverRetriesRateLimits(t *testing.T) {
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Status: 429, RetryAfter: "7"},
		fakellm.Turn{Status: 503},
		fakellm.Turn{Text: "done", Input: 10, Output: 2},
	)
	r := tl.run(t, agent.Session{Prompt: "go", Dir: t.TempDir()})
	if r.err != nil || r.rep.Status != agent.StatusCompleted || r.rep.Output != "done" {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	if want := []time.Duration{7 * time.Second, 2 * time.Second}; !slices.Equal(tl.sleeps, want) {
		t.Errorf("slept %v, want %v (Retry-After, then backoff)", tl.sleeps, want)
	}
	if n := len(tl.srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestLLMDriverGivesUpAfterAttempts(t *testing.T) {
	tl := newTestLLM(t, ProviderAnthropic, Config{MaxAttempts: 2},
		fakellm.Turn{Status: 500}, fakellm.Turn{Status: 529}, fakellm.Turn{Text: "too late"})
	r := tl.run(t, agent.Session{Prompt: "go", Dir: t.TempDir()})
	if !errors.Is(r.err, agent.ErrModel) || errors.Is(r.err, agent.ErrAuth) {
		t.Fatalf("error %v, want ErrModel", r.err)
	}
	if n := len(tl.srv.Requests()); n != 2 || len(tl.sleeps) != 1 {
		t.Errorf("%d requests and %d sleeps, want 2 and 1", n, len(tl.sleeps))
	}
}

func TestLLMDriverAuthError(t *testing.T) {
	for _, p := range []Provider{ProviderOpenAI, ProviderAnthropic} {
		t.Run(string(p), func(t *testing.T) {
			// The server echoes the key it was given, as some proxies do.
			tl := newTestLLM(t, p, Config{}, fakellm.Turn{Status: 401, Text: "invalid key " + testKey})
			r := tl.run(t, agent.Session{Prompt: "go", Dir: t.TempDir()})
			if !errors.Is(r.err, agent.ErrAuth) {
				t.Fatalf("error %v, want ErrAuth", r.err)
			}
			msg := r.err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, testKeyEnv) || !strings.Contains(msg, "401") {
				t.Errorf("want one line naming %s and the status: %q", testKeyEnv, msg)
			}
			if len(tl.srv.Requests()) != 1 || len(tl.sleeps) != 0 {
				t.Errorf("an auth error must not be retried")
			}
		})
	}
}

func TestLLMDriverMissingKey(t *testing.T) {
	for _, p := range []Provider{ProviderOpenAI, ProviderAnthropic} {
		_, err := NewDriver(Config{Provider: p, Model: "m", APIKeyEnv: "GAFFER_TEST_UNSET_KEY",
			Getenv: func(string) string { return "" }})
		if !errors.Is(err, agent.ErrMissingKey) || !strings.Contains(err.Error(), "GAFFER_TEST_UNSET_KEY") {
			t.Errorf("%s: error %v, want ErrMissingKey naming the variable", p, err)
		}
	}
	// The default variable is named too.
	_, err := NewDriver(Config{Provider: ProviderAnthropic, Model: "m", Getenv: func(string) string { return "" }})
	if !errors.Is(err, agent.ErrMissingKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("error %v, want ErrMissingKey naming ANTHROPIC_API_KEY", err)
	}
	// Ollama needs none.
	if _, err := NewDriver(Config{Provider: ProviderOllama, Model: "m", Getenv: func(string) string { return "" }}); err != nil {
		t.Errorf("ollama without a key: %v", err)
	}
}

func TestLLMConfigValidate(t *testing.T) {
	key := func(string) string { return "k" }
	for _, cfg := range []Config{
		{Model: "m"},
		{Provider: "gemini", Model: "m"},
		{Provider: ProviderOpenAI},
		{Provider: ProviderOpenAI, Models: map[agent.Role]string{"boss": "m"}},
		{Provider: ProviderOpenAI, Model: "m", MaxTurns: -1},
		{Provider: ProviderOpenAI, Model: "m", Prices: map[string]state.Price{"m": {Input: -1}}},
	} {
		cfg.Getenv = key
		if _, err := NewDriver(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	d, err := NewDriver(Config{Provider: ProviderOpenAI, Model: "big", Models: map[agent.Role]string{agent.RoleEvaluator: "small"}, Getenv: key})
	if err != nil {
		t.Fatal(err)
	}
	if d.ModelFor(agent.RoleEvaluator) != "small" || d.ModelFor(agent.RoleDeveloper) != "big" {
		t.Errorf("ModelFor: %q %q", d.ModelFor(agent.RoleEvaluator), d.ModelFor(agent.RoleDeveloper))
	}
}

func TestLLMDriverMalformedToolCalls(t *testing.T) {
	dir := t.TempDir()
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Calls: []fakellm.Call{
			call("read_file", `{"path": "a.txt"`),
			call("launch_rockets", `{}`),
			call("write_file", `{"path":"a.txt"}`),
			call("read_file", `{"path": 3}`),
			call("edit_file", `{"path":"missing.txt","old_text":"x","new_text":"y"}`),
		}},
		fakellm.Turn{Text: "gave up nicely"},
	)
	r := tl.run(t, agent.Session{Prompt: "go", Dir: dir})
	if r.err != nil || r.rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	want := []string{"not a valid JSON object", `unknown tool "launch_rockets"; the tools are: read_file,`,
		`missing required argument "content"`, `argument "path" must be a string`, "edit missing.txt"}
	got := tl.srv.Last().ToolResults
	if len(got) != len(want) {
		t.Fatalf("tool results %q", got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) || !r.results()[i].IsError {
			t.Errorf("result %d = %q (error %v), want it to contain %q", i, got[i], r.results()[i].IsError, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.txt was written: %v", err)
	}
}

func TestLLMDriverRefusesEscapes(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tl := newTestLLM(t, ProviderAnthropic, Config{},
		fakellm.Turn{Calls: []fakellm.Call{
			call("write_file", `{"path":"../x","content":"bad"}`),
			call("read_file", `{"path":"/etc/passwd"}`),
			call("write_file", `{"path":"link/evil","content":"bad"}`),
			call("read_file", `{"path":"link/secret"}`),
			call("edit_file", `{"path":"link/secret","old_text":"outside","new_text":"pwned"}`),
			call("list_files", `{"pattern":"../*"}`),
			call("git_diff", `{"path":"../x"}`),
			call("delete_file", `{"path":"link/secret"}`),
		}},
		fakellm.Turn{Text: "could not get out"},
	)
	r := tl.run(t, agent.Session{Prompt: "go", Dir: dir})
	if r.err != nil || r.rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	got := tl.srv.Last().ToolResults
	if len(got) != 8 {
		t.Fatalf("tool results %q", got)
	}
	for i, res := range got {
		if !strings.Contains(res, "path escapes the repository") || !r.results()[i].IsError {
			t.Errorf("result %d = %q, want a path escape error", i, res)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || testkit.ReadFile(t, filepath.Join(outside, "secret")) != "outside" {
		t.Errorf("the outside directory changed: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("../x was written")
	}
	if len(r.rep.FilesChanged) != 0 {
		t.Errorf("FilesChanged = %v", r.rep.FilesChanged)
	}
}

func TestLLMDriverReadOnlyTools(t *testing.T) {
	dir := t.TempDir()
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Calls: []fakellm.Call{
			call("write_file", `{"path":"a.txt","content":"x"}`),
			call("run_command", `{"command":"touch b.txt"}`),
		}},
		fakellm.Turn{Text: `{"approved": true, "comments": "fine"}`},
	)
	r := tl.run(t, agent.Session{Role: agent.RoleReviewer, Prompt: "review", Dir: dir, Tools: []string{agent.ToolRead, agent.ToolList, agent.ToolGrep}})
	if r.err != nil || r.rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	offered := tl.srv.Requests()[0].Tools
	if want := []string{"read_file", "list_files", "grep", "git_status", "git_diff"}; !slices.Equal(offered, want) {
		t.Errorf("tools offered %v, want %v", offered, want)
	}
	for i, res := range tl.srv.Last().ToolResults {
		if !strings.Contains(res, "tool not allowed") {
			t.Errorf("result %d = %q, want tool not allowed", i, res)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a read-only session changed the repository: %v", entries)
	}
	if rv, err := agent.ParseReview(r.rep.Output); err != nil || !rv.Approved {
		t.Errorf("review output %q: %v", r.rep.Output, err)
	}
}

func TestLLMDriverTurnLimitAndContinue(t *testing.T) {
	dir := t.TempDir()
	busy := fakellm.Turn{Calls: []fakellm.Call{call("list_files", `{}`)}, Input: 10, Output: 1}
	tl := newTestLLM(t, ProviderAnthropic, Config{MaxTurns: 2}, busy, busy, fakellm.Turn{Text: "finished now"})
	r := tl.run(t, agent.Session{Prompt: "go", Dir: dir})
	if r.err != nil || r.rep.Status != agent.StatusFailed || !strings.Contains(r.rep.Error, "turn limit of 2") {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	if r.rep.Usage.InputTokens != 20 || r.rep.SessionID == "" {
		t.Errorf("usage %+v, session %q", r.rep.Usage, r.rep.SessionID)
	}
	// The conversation goes on under the same session id.
	r2 := tl.run(t, agent.Session{Prompt: "please finish", Dir: dir, SessionID: r.rep.SessionID})
	if r2.err != nil || r2.rep.Status != agent.StatusCompleted || r2.rep.Output != "finished now" || r2.rep.SessionID != r.rep.SessionID {
		t.Fatalf("continue: %v, %+v", r2.err, r2.rep)
	}
	last := tl.srv.Last()
	if last.LastUser != "please finish" || len(last.ToolResults) != 2 || !strings.Contains(last.Body, `"go"`) {
		t.Errorf("the continued request lost the history: %s", last.Body)
	}
	// An unknown session id (after a restart) starts afresh under that id.
	tl2 := newTestLLM(t, ProviderOpenAI, Config{}, fakellm.Turn{Text: "fresh"})
	r3 := tl2.run(t, agent.Session{Prompt: "again", Dir: dir, SessionID: "llm-gone"})
	if r3.err != nil || r3.rep.SessionID != "llm-gone" || strings.Contains(tl2.srv.Last().Body, "please finish") {
		t.Errorf("fresh session: %v, %+v", r3.err, r3.rep)
	}
}

func TestLLMDriverTokenBudget(t *testing.T) {
	tl := newTestLLM(t, ProviderOpenAI, Config{TokenBudget: 100},
		fakellm.Turn{Calls: []fakellm.Call{call("list_files", `{}`)}, Input: 80, Output: 30},
		fakellm.Turn{Text: "never asked"})
	r := tl.run(t, agent.Session{Prompt: "go", Dir: t.TempDir()})
	if r.err != nil || r.rep.Status != agent.StatusFailed || !strings.Contains(r.rep.Error, "token budget of 100") {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	if n := len(tl.srv.Requests()); n != 1 {
		t.Errorf("%d requests after the budget was used up", n)
	}
}

func TestLLMDriverKeepsKeyFromTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leak.txt"), []byte("key="+testKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Calls: []fakellm.Call{
			call("run_command", fmt.Sprintf(`{"command":"echo \"[$%s]\""}`, testKeyEnv)),
			call("read_file", `{"path":"leak.txt"}`),
			call("grep", `{"pattern":"key="}`),
		}},
		fakellm.Turn{Text: "done"},
	)
	r := tl.run(t, agent.Session{Prompt: "go", Dir: dir}) // run checks the messages and report
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := tl.srv.Last().ToolResults
	if len(res) != 3 || res[0] != "exit code 0\n[]\n" || strings.Contains(strings.Join(res, ""), testKey) {
		t.Errorf("the model was given the key: %q", res)
	}
}

func TestGlobRegexp(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"**", "a/b/c.go", true},
		{"", "x", true},
		{"**/*.go", "c.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"*.go", "a/c.go", false},
		{"cmd/*", "cmd/main.go", true},
		{"cmd/*", "cmd/x/main.go", false},
		{"a?c.txt", "abc.txt", true},
		{"a.b(c)+", "a.b(c)+", true},
		{"a.b", "axb", false},
		{"héllo/**", "héllo/x/y", true},
	} {
		re, err := globRegexp(c.glob)
		if err != nil {
			t.Fatalf("%q: %v", c.glob, err)
		}
		if got := re.MatchString(c.path); got != c.want {
			t.Errorf("glob %q on %q = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
	if _, err := globRegexp("../*"); !errors.Is(err, agent.ErrPathEscape) {
		t.Errorf("../*: %v", err)
	}
}

func TestLLMDriverCancelled(t *testing.T) {
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Calls: []fakellm.Call{call("run_command", `{"command":"sleep 30"}`)}},
		fakellm.Turn{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := agent.Session{Role: agent.RoleDeveloper, Prompt: "go", Dir: t.TempDir(), OnMessage: func(m agent.Message) {
		if m.Kind == agent.ToolCall {
			cancel()
		}
	}}
	rep, err := tl.d.Run(ctx, s)
	if !errors.Is(err, context.Canceled) || rep.Status != agent.StatusFailed {
		t.Fatalf("error %v, report %+v; want context.Canceled", err, rep)
	}
	// A cancelled wait between attempts stops too.
	tl = newTestLLM(t, ProviderOpenAI, Config{}, fakellm.Turn{Status: 429}, fakellm.Turn{Text: "never"})
	tl.d.cfg.Sleep = func(context.Context, time.Duration) error { return context.DeadlineExceeded }
	if _, err := tl.d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Prompt: "go", Dir: t.TempDir()}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want context.DeadlineExceeded", err)
	}
}

func TestLLMDriverConcurrentSessions(t *testing.T) {
	const n = 4
	turns := make([]fakellm.Turn, n)
	for i := range turns {
		turns[i] = fakellm.Turn{Text: "ok", Input: 1}
	}
	tl := newTestLLM(t, ProviderAnthropic, Config{}, turns...)
	dir := t.TempDir()
	type result struct {
		rep agent.Report
		err error
	}
	out := make(chan result, n)
	for range n {
		go func() {
			rep, err := tl.d.Run(context.Background(), agent.Session{Role: agent.RoleEvaluator, RunID: "r", Prompt: "go", Dir: dir})
			out <- result{rep, err}
		}()
	}
	ids := map[string]bool{}
	for range n {
		r := <-out
		if r.err != nil || r.rep.Output != "ok" {
			t.Fatalf("run: %v, %+v", r.err, r.rep)
		}
		ids[r.rep.SessionID] = true
	}
	if len(ids) != n {
		t.Errorf("session ids %v, want %d different", ids, n)
	}
	for id := range ids {
		tl.d.Forget(id)
	}
	if len(tl.d.sessions) != 0 {
		t.Errorf("Forget left %d sessions", len(tl.d.sessions))
	}
}

func TestLLMDriverOllamaNeedsNoKey(t *testing.T) {
	srv := fakellm.NewOpenAI(fakellm.Turn{Text: "hi from ollama"})
	defer srv.Close()
	d, err := NewDriver(Config{Provider: ProviderOllama, BaseURL: srv.BaseURL(), Model: "qwen3", HTTPClient: srv.Client(),
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleArchitect, Prompt: "plan", Dir: t.TempDir()})
	if err != nil || rep.Output != "hi from ollama" || srv.Last().Model != "qwen3" {
		t.Fatalf("run: %v, %+v", err, rep)
	}
}

func TestLLMDriverGitTools(t *testing.T) {
	dir := t.TempDir()
	tb, err := agent.NewToolbox(dir, agent.ToolboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	if err := tb.Write("a.txt", "old\n"); err != nil {
		t.Fatal(err)
	}
	res, err := tb.Run(context.Background(), "git init -q && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm init", nil)
	if err != nil || res.Failed() {
		t.Skipf("no git: %v %s", err, res.Output)
	}
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Calls: []fakellm.Call{call("edit_file", `{"path":"a.txt","old_text":"old","new_text":"new"}`)}},
		fakellm.Turn{Calls: []fakellm.Call{call("git_status", `{}`), call("git_diff", `{"path":"a.txt"}`)}},
		fakellm.Turn{Text: "done"})
	r := tl.run(t, agent.Session{Role: agent.RoleDeveloper, Prompt: "go", Dir: dir})
	if r.err != nil || r.rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v, %+v", r.err, r.rep)
	}
	got := tl.srv.Last().ToolResults
	if len(got) != 3 || !strings.Contains(got[1], " M a.txt") || !strings.Contains(got[2], "-old\n+new") {
		t.Errorf("git results %q", got)
	}
}
