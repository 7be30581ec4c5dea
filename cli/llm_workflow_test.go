package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/workspace"
)

// These tests run whole workflows with the llm driver against fake model
// servers on 127.0.0.1 (internal/fakellm) that answer by role: the
// architect writes a two-task plan, the developer writes a file and runs a
// command with tools, the reviewer answers JSON.

// greetPlan is the architect's plan: task mode (no types, no depends-on),
// one task per phase, the same developer session through a task's reviews.
const greetPlan = `# Plan: a greeting

Add Greet to package greet, test first.

### Task 1: Write the test for Greet
- files: greet_test.go

TestGreet checks Greet("Ada") == "hello, Ada".

### Task 2: Implement Greet
- files: greet.go

Make TestGreet pass.
`

const greetTest = `package greet

import "testing"

func TestGreet(t *testing.T) {
	if got := Greet("Ada"); got != "hello, Ada" {
		t.Fatalf("Greet = %q", got)
	}
}
`

const greetImpl = `package greet

// Greet greets name.
func Greet(name string) string { return "hello, " + name }
`

// greetModel is the fake model's side of the workflow. The developer of
// phase 1 writes the test and checks it is there (and runs env, so tests
// can look for secrets in what commands see); the developer of phase 2
// writes the implementation and runs go test. reviews answers the
// reviewer's n-th request (from 1); nil approves everything.
type greetModel struct {
	reviews func(n int) fakellm.Turn

	mu       sync.Mutex
	reviewed int
}

func (m *greetModel) respond(r fakellm.Request) fakellm.Turn {
	turn := func(t fakellm.Turn) fakellm.Turn {
		t.Input, t.Output = 1000, 100
		return t
	}
	call := func(name, args string) fakellm.Turn {
		return turn(fakellm.Turn{Calls: []fakellm.Call{{Name: name, Args: args}}})
	}
	switch {
	case strings.Contains(r.System, "architect agent"):
		return turn(fakellm.Turn{Text: greetPlan})
	case strings.Contains(r.System, "reviewer agent"):
		m.mu.Lock()
		m.reviewed++
		n := m.reviewed
		m.mu.Unlock()
		if m.reviews != nil {
			return m.reviews(n)
		}
		return turn(fakellm.Turn{Text: `{"approved": true, "comments": "looks right"}`})
	case strings.Contains(r.System, "evaluator agent"):
		return turn(fakellm.Turn{Text: `{"items": [{"text": "x", "disposition": "IMPLEMENT", "reason": "valid"}]}`})
	case strings.Contains(r.System, "developer agent"):
		phase2 := strings.Contains(r.LastUser, "Execute phase 2 of")
		switch {
		case r.SinceUser == 0 && !phase2:
			return call("write_file", jsonArgs("path", "greet_test.go", "content", greetTest))
		case r.SinceUser == 0:
			return call("write_file", jsonArgs("path", "greet.go", "content", greetImpl))
		case r.SinceUser == 1 && !phase2:
			return call("run_command", jsonArgs("command", "test -f greet_test.go && echo present && env"))
		case r.SinceUser == 1:
			return call("run_command", jsonArgs("command", "go test ./..."))
		}
		return turn(fakellm.Turn{Text: "Done; the command's output is above."})
	}
	return fakellm.Turn{Status: 400, Text: "the fake model cannot tell the role from the system prompt: " + r.System}
}

// jsonArgs makes a JSON object of string pairs.
func jsonArgs(kv ...string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%q", kv[i], kv[i+1])
	}
	b.WriteString("}")
	return b.String()
}

// greetRepo makes a Go module repository with files (gaffer.yaml, …)
// committed, and returns its directory.
func greetRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "greet")
	repo, err := workspace.Init(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"go.mod": "module example.com/greet\n\ngo 1.21\n", "doc.go": "// Package greet greets.\npackage greet\n"}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	author := workspace.Signature{Name: "test", Email: "test@gaffer.invalid"}
	if _, err := repo.Commit(context.Background(), "greet: an empty module", nil, workspace.CommitOptions{Author: author, When: time.Unix(1.7e9, 0)}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// llmProfile is a gaffer.yaml with a profile "fake" putting every role on
// the llm driver against provider at baseURL.
func llmProfile(provider, baseURL, keyEnv string) string {
	return fmt.Sprintf(`default_profile: fake
profiles:
  fake:
    driver: llm
    model: fake-model
    provider:
      name: %s
      base_url: %s
      api_key_env: %s
    limits:
      max_turns: 12
      max_task_review_iterations: 2
    prices:
      fake-model: {input: 3, output: 15, cached: 0.3}
    tdd: false
`, provider, baseURL, keyEnv)
}

// checkGreetRun checks what a completed greet run left: a commit per
// phase with its trailers and the record commit, the files, usage with
// cost for every role that ran.
func checkGreetRun(t *testing.T, dir string) runview.Run {
	t.Helper()
	head := runRev(t, dir)
	subjects := strings.Split(gitOut(t, dir, "log", "--format=%s", "-4", head), "\n")
	if len(subjects) != 4 || !strings.HasPrefix(subjects[3], "greet: an empty module") || !strings.Contains(subjects[0], "record") {
		t.Fatalf("commits = %q, want two phase commits and the record on the initial one", subjects)
	}
	for _, rev := range []string{head + "~1", head + "~2"} {
		body := gitOut(t, dir, "log", "-1", "--format=%B", rev)
		for _, tr := range []string{"Gaffer-Run: ", "Gaffer-Phase: ", "Gaffer-Attempt: 1"} {
			if !strings.Contains(body, tr) {
				t.Errorf("commit %s lacks the trailer %q:\n%s", rev, tr, body)
			}
		}
	}
	if got := gitOut(t, dir, "show", head+"~2:greet_test.go"); got != strings.TrimSpace(greetTest) {
		t.Errorf("phase 1 committed greet_test.go =\n%s", got)
	}
	if got := gitOut(t, dir, "show", head+"~1:greet.go"); got != strings.TrimSpace(greetImpl) {
		t.Errorf("phase 2 committed greet.go =\n%s", got)
	}
	v := statusJSON(t, "--repo", dir)
	if v.Status != "completed" {
		t.Fatalf("status = %+v", v)
	}
	for _, role := range []string{"architect", "developer", "reviewer"} {
		if u := v.Usage[role]; u.InputTokens == 0 || u.OutputTokens == 0 || u.CostUSD <= 0 {
			t.Errorf("usage of the %s = %+v, want tokens and a cost", role, u)
		}
	}
	return v
}

func TestRunLLMOpenAICommitsPhases(t *testing.T) {
	t.Parallel()
	m := &greetModel{}
	srv := fakellm.NewOpenAIFunc(m.respond)
	defer srv.Close()
	dir := greetRepo(t, map[string]string{"gaffer.yaml": llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_OPENAI_KEY")})
	env := map[string]string{"GAFFER_TEST_OPENAI_KEY": "sk-test-openai"}

	out, code := gafferEnv(t, env, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	v := checkGreetRun(t, dir)
	if v.Usage["developer"].InputTokens != 6000 { // two sessions of three model calls
		t.Errorf("developer usage = %+v, want 6000 input tokens", v.Usage["developer"])
	}
	var goTest, auth bool
	for _, r := range srv.Requests() {
		if r.Model != "fake-model" {
			t.Errorf("a request asked for model %q, want the profile's fake-model", r.Model)
		}
		auth = auth || r.Auth == "Bearer sk-test-openai"
		for _, res := range r.ToolResults {
			goTest = goTest || strings.Contains(res, "ok  \texample.com/greet")
		}
	}
	if !goTest || !auth {
		t.Errorf("the model did not see go test pass (%v) or was not sent the key (%v)", goTest, auth)
	}
}

func TestRunLLMAnthropicCommitsPhasesAfterARateLimit(t *testing.T) {
	t.Parallel()
	m := &greetModel{}
	var mu sync.Mutex
	limited := false
	srv := fakellm.NewAnthropicFunc(func(r fakellm.Request) fakellm.Turn {
		mu.Lock()
		first := !limited && strings.Contains(r.System, "reviewer agent")
		limited = limited || first
		mu.Unlock()
		if first { // the reviewer's first call is rate limited; the driver waits and tries again
			return fakellm.Turn{Status: 429, RetryAfter: "0", Text: "rate limited, slow down"}
		}
		return m.respond(r)
	})
	defer srv.Close()
	dir := greetRepo(t, map[string]string{"gaffer.yaml": llmProfile("anthropic", srv.BaseURL(), "GAFFER_TEST_ANTHROPIC_KEY")})
	env := map[string]string{"GAFFER_TEST_ANTHROPIC_KEY": "sk-ant-test"}

	out, code := gafferEnv(t, env, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	checkGreetRun(t, dir)
	if !limited {
		t.Error("the rate limit was never served")
	}
	if r := srv.Requests()[0]; r.Auth != "sk-ant-test" || r.Model != "fake-model" {
		t.Errorf("first request: key %q, model %q", r.Auth, r.Model)
	}
}

func TestRunLLMMissingKeyWritesNothing(t *testing.T) {
	t.Parallel()
	dir := greetRepo(t, map[string]string{"gaffer.yaml": llmProfile("openai", "http://127.0.0.1:9/v1", "GAFFER_TEST_MISSING_KEY")})
	env := map[string]string{"GAFFER_TEST_MISSING_KEY": ""}
	out, code := gafferEnv(t, env, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
	if code != ExitPrecondition {
		t.Fatalf("exit %d, want %d\n%s", code, ExitPrecondition, out)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(out, "GAFFER_TEST_MISSING_KEY") {
		t.Fatalf("want one line naming the variable, got:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !os.IsNotExist(err) {
		t.Errorf("the store was created: %v", err)
	}
}

// A run keeps the settings it started with: once the plan waits for
// approval, the user's configuration is broken and the key's variable
// changes value; approve, then resume, finish the run with the stored
// settings (the key is read again, by its stored name).
func TestRunLLMSettingsAreStoredWithTheRun(t *testing.T) {
	t.Parallel()
	m := &greetModel{}
	srv := fakellm.NewOpenAIFunc(m.respond)
	defer srv.Close()
	xdg := t.TempDir()
	cfgFile := filepath.Join(xdg, "gaffer", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfgFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, []byte(llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_KEY2")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := greetRepo(t, nil)
	env := func(key string) map[string]string {
		return map[string]string{"XDG_CONFIG_HOME": xdg, "GAFFER_TEST_KEY2": key}
	}
	out, code := gafferEnv(t, env("sk-first"), "--repo", dir, "run", "--goal", "Add Greet", "--run-id", "r-stored")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(cfgFile, []byte("profiles: [this is not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := gafferEnv(t, env(""), "--repo", dir, "resume", "r-stored"); code != ExitPrecondition || !strings.Contains(out, "GAFFER_TEST_KEY2") {
		t.Fatalf("resume without the key: exit %d, want %d naming the variable\n%s", code, ExitPrecondition, out)
	}
	if out, code := gafferEnv(t, env(""), "--repo", dir, "approve", "r-stored"); code != ExitPrecondition || !strings.Contains(out, "GAFFER_TEST_KEY2") {
		t.Fatalf("approve without the key: exit %d, want %d naming the variable\n%s", code, ExitPrecondition, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "awaiting_approval" {
		t.Fatalf("after approve without the key the run is %s, want still awaiting approval", v.Status)
	}
	if out, code := gafferEnv(t, env("sk-second"), "--repo", dir, "approve", "r-stored"); code != 0 {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	checkGreetRun(t, dir)
	if last := srv.Last(); last.Auth != "Bearer sk-second" {
		t.Errorf("after the restart the key sent was %q, want the variable's new value", last.Auth)
	}
}

func TestRunLLMRefusedKeyIsExit8NamingTheVariable(t *testing.T) {
	t.Parallel()
	srv := fakellm.NewOpenAIFunc(func(fakellm.Request) fakellm.Turn {
		return fakellm.Turn{Status: 401, Text: "invalid api key"}
	})
	defer srv.Close()
	dir := greetRepo(t, map[string]string{"gaffer.yaml": llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_BAD_KEY")})
	env := map[string]string{"GAFFER_TEST_BAD_KEY": "sk-wrong"}
	out, code := gafferEnv(t, env, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve", "--run-id", "r-auth")
	if code != ExitPrecondition || !strings.Contains(out, "GAFFER_TEST_BAD_KEY") || !strings.Contains(out, "resume r-auth") {
		t.Fatalf("exit %d, want %d naming the variable and how to continue\n%s", code, ExitPrecondition, out)
	}
	if strings.Contains(out, "sk-wrong") {
		t.Errorf("the key is in the output:\n%s", out)
	}
}
