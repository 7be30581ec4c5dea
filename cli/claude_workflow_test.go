package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/npmpin/npmpintest"
)

// These tests run the workflow with the real Claude Code CLI (the pinned
// version, installed from npm by npmpintest.ForTest and claude.Pin) as the developer,
// through the cli driver and the built-in "claude" template, against a
// fake Anthropic Messages server on 127.0.0.1. The plan is given (no
// architect) and the reviewer is scripted.

// claudeOnPath installs Claude Code when needed, puts it first in PATH,
// gives it a fresh HOME and sets the key (claudeEnv, in this process's
// environment).
func claudeOnPath(t *testing.T, respond func(fakeanthropic.Request) fakeanthropic.Reply) *fakeanthropic.Server {
	t.Helper()
	srv, env := claudeEnv(t, respond)
	setenv(t, env)
	return srv
}

// claudeEnv installs Claude Code when needed, starts a fake Anthropic
// server answering with respond, and returns it with the environment of
// a process that finds Claude Code first in PATH, has a fresh HOME and the
// key: to pass to the processes of a parallel test.
func claudeEnv(t *testing.T, respond func(fakeanthropic.Request) fakeanthropic.Reply) (*fakeanthropic.Server, []string) {
	t.Helper()
	bin := npmpintest.ForTest(t, claude.Pin)
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"ANTHROPIC_API_KEY=sk-ant-claude-test",
	}
	srv, err := fakeanthropic.Start(respond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, env
}

// setenv sets each KEY=VALUE of env for the test (t.Setenv).
func setenv(t *testing.T, env []string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// envValue is the value of key in env (KEY=VALUE entries), the last one
// if several.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// claudeProfile is a gaffer.yaml whose default profile runs the developer
// on Claude Code (the built-in template, its env pointing at url) and the
// other roles on the script driver.
func claudeProfile(url string, reviews, attempts int) string {
	return `default_profile: cc
profiles:
  cc:
    driver: script
    roles:
      developer: {driver: cli, agent: claude, model: claude-sonnet-4-5}
    agents:
      claude:
        env:
          ANTHROPIC_BASE_URL: ` + url + `
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
          DISABLE_TELEMETRY: "1"
          DISABLE_AUTOUPDATER: "1"
          DISABLE_ERROR_REPORTING: "1"
          CLAUDE_CODE_MAX_RETRIES: "0"
    limits:
      max_turns: 6
      max_task_review_iterations: ` + strconv.Itoa(reviews) + `
      max_phase_attempts: ` + strconv.Itoa(attempts) + `
    tdd: false
`
}

// lastMessage returns the last message of r as raw JSON text.
func lastMessage(r fakeanthropic.Request) string {
	if len(r.Messages) == 0 {
		return ""
	}
	return string(r.Messages[len(r.Messages)-1])
}

// claudeWrite is a Claude Code Write tool call.
func claudeWrite(path, content string) fakeanthropic.Reply {
	return fakeanthropic.Reply{
		Text:     "Writing " + path + ".",
		ToolUses: []fakeanthropic.ToolUse{{Name: "Write", Input: map[string]string{"file_path": path, "content": content}}},
		Usage:    fakeanthropic.Usage{InputTokens: 500, OutputTokens: 50},
	}
}

// checkGreetTasks checks the task commits below rev of a greet run whose
// review rejected task 1 once: task 1's commit holds both test files (the
// second from the review's retry), task 2's the implementation.
func checkGreetTasks(t *testing.T, dir, rev string) {
	t.Helper()
	files := gitOut(t, dir, "show", "--name-only", "--format=", rev+"~2")
	if !strings.Contains(files, "greet_test.go") || !strings.Contains(files, "greet_empty_test.go") {
		t.Errorf("task 1's commit has %q, want both test files (the second from the review retry)", files)
	}
	if got := gitOut(t, dir, "show", rev+"~1:greet.go"); got != strings.TrimSpace(greetImpl) {
		t.Errorf("task 2's greet.go =\n%s", got)
	}
}

// claudeWrites is the healthy provider's script: a session writes its
// phase's file and says it is done once the tool's result comes back.
func claudeWrites(r fakeanthropic.Request) fakeanthropic.Reply {
	last := lastMessage(r)
	switch {
	case r.HasToolResult():
		return fakeanthropic.Reply{Text: "Done.", Usage: fakeanthropic.Usage{InputTokens: 600, OutputTokens: 5}}
	case strings.Contains(last, "Execute phase 2 of"):
		return claudeWrite("greet.go", greetImpl)
	case strings.Contains(last, "Execute phase 1 of"):
		return claudeWrite("greet_test.go", greetTest)
	}
	return fakeanthropic.Reply{Status: 400, ErrorMessage: "the fake cannot place this request"}
}

const reviewRejectsOnce = `reviewer:
  - phase: 1
    iteration: 1
    approved: false
    comments: the test misses the empty name
    items:
      - {text: add a test for Greet(""), disposition: IMPLEMENT}
`

const greetEmptyTest = `package greet

import "testing"

func TestGreetEmpty(t *testing.T) {
	if got := Greet(""); got != "hello, " {
		t.Fatalf("Greet = %q", got)
	}
}
`

// TestClaudeCodeDeveloperInTheWorkflow: Claude Code writes each task's
// file (real commits with trailers); the reviewer rejects task 1 once and
// the same Claude session continues with --resume, the fake model seeing
// the whole earlier conversation.
func TestClaudeCodeDeveloperInTheWorkflow(t *testing.T) {
	srv := claudeOnPath(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		if !r.HasToolResult() && strings.Contains(lastMessage(r), "Review iteration 2") {
			return claudeWrite("greet_empty_test.go", greetEmptyTest)
		}
		return claudeWrites(r)
	})
	plan, script := planFiles(t, greetPlan, reviewRejectsOnce)
	dir := greetRepo(t, map[string]string{"gaffer.yaml": claudeProfile(srv.URL, 3, 1)})

	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	rev := runRev(t, dir)
	subjects := strings.Split(gitOut(t, dir, "log", "--format=%s", "-4", rev), "\n")
	if len(subjects) != 4 || !strings.HasPrefix(subjects[3], "greet: an empty module") {
		t.Fatalf("commits = %q, want two task commits and the record", subjects)
	}
	body := gitOut(t, dir, "log", "-1", "--format=%B", rev+"~2")
	if !strings.Contains(body, "Gaffer-Phase: 1") || !strings.Contains(body, "Gaffer-Run: ") {
		t.Errorf("task 1's commit lacks its trailers:\n%s", body)
	}
	checkGreetTasks(t, dir, rev)

	var retry *fakeanthropic.Request
	for _, r := range srv.Requests() {
		if strings.Contains(lastMessage(r), "Review iteration 2") {
			retry = &r
			break
		}
	}
	if retry == nil {
		t.Fatal("the review retry never reached the model")
	}
	for _, earlier := range []string{"greet_test.go", "TestGreet(t *testing.T)", "tool_result", "Writing greet_test.go."} {
		if !retry.Contains(earlier) {
			t.Errorf("the retry's request lacks the earlier conversation (%q): the session was not resumed", earlier)
		}
	}
	v := statusJSON(t, "--repo", dir)
	if u := v.Usage["developer"]; u.InputTokens == 0 || u.CostUSD <= 0 {
		t.Errorf("developer usage = %+v, want Claude Code's tokens and cost", u)
	}
}

// TestClaudeCodeAPIErrorIsAFailedAttempt: the API refuses every request;
// the developer's session fails, which the workflow takes as a rejected
// attempt carrying the API's error text, and at the limit the run halts
// with the tree back at the start.
func TestClaudeCodeAPIErrorIsAFailedAttempt(t *testing.T) {
	srv := claudeOnPath(t, func(fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Status: 400, ErrorMessage: "credit balance too low for this test"}
	})
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": claudeProfile(srv.URL, 1, 1)})
	head := gitOut(t, dir, "rev-parse", "HEAD")

	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	if code != ExitHalted {
		t.Fatalf("run: exit %d, want %d\n%s", code, ExitHalted, out)
	}
	v := statusJSON(t, "--repo", dir)
	if v.Status != "halted" || len(v.Phases) == 0 || v.Phases[0].Review == nil ||
		!strings.Contains(v.Phases[0].Review.Comments, "credit balance too low for this test") {
		t.Fatalf("status = %+v, want halted with the API's error as phase 1's feedback", v)
	}
	if strings.Contains(out, "sk-ant-claude-test") {
		t.Error("the API key is in the output")
	}
	// The branch holds nothing of the phase: at most the commit of the
	// run's decision records, on top of the start.
	tip := runRev(t, dir)
	if got := gitOut(t, dir, "rev-parse", tip); got != head {
		if gitOut(t, dir, "rev-parse", tip+"~1") != head || !strings.Contains(gitOut(t, dir, "log", "-1", "--format=%B", tip), "Gaffer-Record: decisions") {
			t.Errorf("%s moved to %s", tip, got)
		}
		for _, f := range strings.Fields(gitOut(t, dir, "diff", "--name-only", tip+"~1", tip)) {
			if !strings.Contains(f, "/recovery/decision-") {
				t.Errorf("the records' commit holds %s", f)
			}
		}
	}
}

// planFiles writes plan and script into a fresh directory, out of any
// repository, and returns their paths.
func planFiles(t *testing.T, plan, script string) (planPath, scriptPath string) {
	t.Helper()
	tmp := t.TempDir()
	planPath, scriptPath = filepath.Join(tmp, "plan.md"), filepath.Join(tmp, "script.yaml")
	writeTestFile(t, planPath, plan)
	writeTestFile(t, scriptPath, script)
	return planPath, scriptPath
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
