package cliagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/npmpin/npmpintest"
)

// These tests drive the real Claude Code CLI (installed from npm at the
// pinned version, see scripts/install-npm-cli.sh claude) against a fake
// Anthropic Messages server on 127.0.0.1 that scripts the model's side.

// claudeCode returns a Driver running the real Claude Code, with the
// Claude template, talking to srv, with home as its HOME.
func claudeCode(t *testing.T, srv *fakeanthropic.Server, home string, maxTurns int) *Driver {
	t.Helper()
	bin := npmpintest.ForTest(t, claude.Pin)
	tmpl := claude.New().Template()
	tmpl.Command[0], tmpl.ResumeCommand[0] = bin, bin
	return newCLI(t, Options{
		Template: tmpl,
		Model:    "claude-sonnet-4-5",
		MaxTurns: maxTurns,
		Environ:  []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8"},
		Env:      offline(srv),
		Timeout:  45 * time.Second,
	})
}

// offline is the environment that points Claude Code at srv and keeps it
// off the network (see AGENT-CLIS.md).
func offline(srv *fakeanthropic.Server) map[string]string {
	return map[string]string{
		"ANTHROPIC_BASE_URL":                       srv.URL,
		"ANTHROPIC_API_KEY":                        "test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"CLAUDE_CODE_MAX_RETRIES":                  "0",
	}
}

func startFake(t *testing.T, respond func(fakeanthropic.Request) fakeanthropic.Reply) *fakeanthropic.Server {
	t.Helper()
	srv, err := fakeanthropic.Start(respond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// The model's script: a first request asks for a Write of hello.txt; once
// the tool result is back it says it is done. A request carrying the
// second prompt gets its own answer.
func writeThenResume(r fakeanthropic.Request) fakeanthropic.Reply {
	switch {
	case r.Contains("SECOND PROMPT"):
		return fakeanthropic.Reply{Text: "continued the session", Usage: fakeanthropic.Usage{InputTokens: 300, OutputTokens: 7}}
	case r.HasToolResult():
		return fakeanthropic.Reply{Text: "Wrote hello.txt", Usage: fakeanthropic.Usage{InputTokens: 200, OutputTokens: 10, CacheRead: 50}}
	}
	return fakeanthropic.Reply{
		Text:     "I will write the file.",
		ToolUses: []fakeanthropic.ToolUse{{Name: "Write", Input: map[string]string{"file_path": "hello.txt", "content": "hello from claude\n"}}},
		Usage:    fakeanthropic.Usage{InputTokens: 100, OutputTokens: 20},
	}
}

func TestClaudeCodeWriteThenResume(t *testing.T) {
	srv := startFake(t, writeThenResume)
	home, dir := t.TempDir(), testkit.GitRepo(t)
	d := claudeCode(t, srv, home, 0)

	var msgs []agent.Message
	rep, err := d.Run(context.Background(), agent.Session{
		Role: agent.RoleDeveloper, Dir: dir, Prompt: "FIRST PROMPT: write hello.txt",
		OnMessage: func(m agent.Message) { msgs = append(msgs, m) },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusCompleted || rep.Output != "Wrote hello.txt" || rep.Summary != "Wrote hello.txt" {
		t.Fatalf("report = %+v, want completed with the model's last text", rep)
	}
	got, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
	if err != nil || string(got) != "hello from claude\n" {
		t.Fatalf("hello.txt = %q, %v; want the content the model wrote", got, err)
	}
	if !slices.Equal(rep.FilesChanged, []string{"hello.txt"}) {
		t.Errorf("FilesChanged = %q, want [hello.txt]", rep.FilesChanged)
	}
	if rep.SessionID == "" {
		t.Error("no session id in the report")
	}
	if rep.Usage.InputTokens != 300 || rep.Usage.OutputTokens != 30 || rep.Usage.CachedTokens != 50 || rep.Usage.CostUSD <= 0 {
		t.Errorf("usage = %+v, want the two calls' tokens (300 in, 30 out, 50 cached) and a cost", rep.Usage)
	}
	var kinds []string
	for _, m := range msgs {
		k := m.Kind.String()
		if m.Kind == agent.ToolCall || m.Kind == agent.ToolResult {
			k += ":" + m.Tool
		}
		kinds = append(kinds, k)
	}
	if want := []string{"text", "tool_call:Write", "tool_result:Write", "text", "usage"}; !slices.Equal(kinds, want) {
		t.Errorf("messages = %q, want %q", kinds, want)
	}
	if msgs[len(msgs)-1].Usage != rep.Usage || !strings.Contains(msgs[1].Input, "hello.txt") {
		t.Errorf("messages = %+v", msgs)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != "claude-sonnet-4-5" {
		t.Fatalf("the fake saw %d requests (first model %q), want 2 for claude-sonnet-4-5", len(reqs), reqs[0].Model)
	}
	// Version 2.1.330 names it in a system reminder inside the messages,
	// not in the system prompt.
	if !strings.Contains(string(reqs[0].Body), "Primary working directory: "+dir) {
		t.Errorf("the request does not name the session's directory %s", dir)
	}

	// Continue the session: the model sees the earlier conversation.
	rep2, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "SECOND PROMPT: carry on", SessionID: rep.SessionID, Iteration: 2})
	if err != nil {
		t.Fatalf("Run (resume): %v", err)
	}
	if rep2.Status != agent.StatusCompleted || rep2.Output != "continued the session" || rep2.SessionID == "" {
		t.Fatalf("resumed report = %+v", rep2)
	}
	reqs = srv.Requests()
	last := reqs[len(reqs)-1]
	for _, earlier := range []string{"FIRST PROMPT: write hello.txt", "tool_result", "I will write the file."} {
		if !last.Contains(earlier) {
			t.Errorf("the resumed request does not carry the earlier conversation (%q missing)", earlier)
		}
	}
	if len(rep2.FilesChanged) != 0 {
		t.Errorf("resumed FilesChanged = %q, want none (hello.txt was already there)", rep2.FilesChanged)
	}
}

func TestClaudeCodeAPIErrorIsFailedReport(t *testing.T) {
	srv := startFake(t, func(fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Status: 400, ErrorMessage: "credit balance too low for test"}
	})
	d := claudeCode(t, srv, t.TempDir(), 0)
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleReviewer, Dir: testkit.GitRepo(t), Prompt: "review it"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, "credit balance too low for test") {
		t.Fatalf("report = %+v, want failed with the API's error text", rep)
	}
	if strings.Contains(rep.Error, "test-key") {
		t.Errorf("the API key is in the report: %q", rep.Error)
	}
}

func TestClaudeCodeMaxTurns(t *testing.T) {
	srv := startFake(t, func(r fakeanthropic.Request) fakeanthropic.Reply { // a model that never stops
		return fakeanthropic.Reply{ToolUses: []fakeanthropic.ToolUse{{Name: "Write", Input: map[string]string{"file_path": "loop.txt", "content": "again\n"}}}}
	})
	d := claudeCode(t, srv, t.TempDir(), 2)
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: testkit.GitRepo(t), Prompt: "loop"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, "maximum number of turns (2)") {
		t.Fatalf("report = %+v, want failed at the turn limit", rep)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the model was called %d times, want 2 (--max-turns=2)", n)
	}
}

// TestClaudeCodeBashCannotWriteOutside has the model run a Bash command
// that writes outside the repository, then one that writes inside: with
// Landlock the first is refused and the second works.
func TestClaudeCodeBashCannotWriteOutside(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	target := filepath.Join(testkit.OutsideDir(t, ".outside-"), "file")
	srv := startFake(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		bash := func(cmd string) fakeanthropic.Reply {
			return fakeanthropic.Reply{ToolUses: []fakeanthropic.ToolUse{{Name: "Bash", Input: map[string]string{"command": cmd}}}}
		}
		switch strings.Count(string(r.Body), `"tool_result"`) {
		case 0:
			return bash("echo x > " + target)
		case 1:
			return bash("echo in > inside.txt && echo t > \"$TMPDIR/t\" && echo tmp-ok")
		}
		return fakeanthropic.Reply{Text: "done"}
	})
	dir := testkit.GitRepo(t)
	rep, err := claudeCode(t, srv, t.TempDir(), 0).Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "write"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the agent's Bash wrote %s outside the repository (stat: %v; report %+v)", target, err, rep)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, "inside.txt")); got != "in\n" {
		t.Errorf("inside.txt = %q, want the Bash command's write", got)
	}
	reqs := srv.Requests()
	// bash says "Permission denied", zsh (Claude Code's shell where it is
	// installed) "permission denied".
	if last := reqs[len(reqs)-1]; !strings.Contains(strings.ToLower(string(last.Body)), "permission denied") || !last.Contains("tmp-ok") {
		t.Errorf("the tool results do not show the refused write and the writable TMPDIR: %s", last.Messages)
	}
}

// TestClaudeCodeToolsDisallowed runs a reviewer, whose session tools do
// not include writing, with a model that asks for Claude Code's Write:
// the tool is denied and nothing is written.
func TestClaudeCodeToolsDisallowed(t *testing.T) {
	srv := startFake(t, writeThenResume)
	dir := testkit.GitRepo(t)
	rep, err := claudeCode(t, srv, t.TempDir(), 0).Run(context.Background(), agent.Session{
		Role: agent.RoleReviewer, Dir: dir, Prompt: "FIRST PROMPT: write hello.txt", Tools: agent.DefaultTools(agent.RoleReviewer)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reviewer's agent wrote hello.txt (stat: %v; report %+v)", err, rep)
	}
	if len(rep.FilesChanged) != 0 {
		t.Errorf("FilesChanged = %q, want none", rep.FilesChanged)
	}
}

// TestClaudeCodeBashCannotReadGafferOrWriteGit runs the real Claude Code
// in a repository (as an in-place run does) with a model whose Bash reads
// gaffer's (this test process's) /proc/PID/environ and plants an
// fsmonitor in .git/config: both are refused (issue 20), and .git/config
// is as it was.
func TestClaudeCodeBashCannotReadGafferOrWriteGit(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	probe := fmt.Sprintf("head -c 20 /proc/%d/environ >/dev/null 2>&1 && echo ENVIRON-READ || echo ENVIRON-REFUSED; "+
		"git config core.fsmonitor /tmp/x.sh && echo GIT-PLANTED || echo GIT-REFUSED", os.Getpid())
	srv := startFake(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		if strings.Count(string(r.Body), `"tool_result"`) == 0 {
			return fakeanthropic.Reply{ToolUses: []fakeanthropic.ToolUse{{Name: "Bash", Input: map[string]string{"command": probe}}}}
		}
		return fakeanthropic.Reply{Text: "done"}
	})
	dir := testkit.GitRepo(t)
	cfg := testkit.ReadFile(t, filepath.Join(dir, ".git", "config"))
	if _, err := claudeCode(t, srv, t.TempDir(), 0).Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "probe"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if !last.Contains("ENVIRON-REFUSED") || !last.Contains("GIT-REFUSED") {
		t.Errorf("the tool result does not show both refused: %s", last.Messages)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, ".git", "config")); got != cfg {
		t.Errorf(".git/config changed:\n%s", got)
	}
}
