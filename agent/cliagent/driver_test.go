package cliagent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/cliagent/codex"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
	"github.com/gaffer-dev/gaffer/state"
)

// fakeAgent returns a template that runs testdata/fakeagent.sh in mode,
// with args after it.
func fakeAgent(t *testing.T, out OutputFormat, mode string, args ...string) Template {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "fakeagent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return Template{Command: append([]string{"sh", script, mode}, args...), Output: out}
}

func newCLI(t *testing.T, opts Options) *Driver {
	t.Helper()
	d, err := NewDriver(opts)
	if err != nil {
		t.Fatalf("NewDriver: %v", err)
	}
	return d
}

// readPids reads the "SHELL CHILD" pids a fakeagent.sh mode wrote.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the agent wrote no pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid %q: %v", f, err)
		}
		pids = append(pids, n)
	}
	return pids
}

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
}

func TestCLITimeoutKillsProcessGroup(t *testing.T) {
	needProc(t)
	dir := t.TempDir() // the pids go in the repository, where a confined agent can write
	pidFile := filepath.Join(dir, "pids")
	d := newCLI(t, Options{
		Template:  fakeAgent(t, OutputText, "hang", pidFile),
		Timeout:   3 * time.Second, // room for a loaded machine to start the shell and write its pids
		KillGrace: 100 * time.Millisecond,
	})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "hang"})
	// Its output does not say it was running a command: it was waiting for
	// its model, whose provider is at fault.
	if !errors.Is(err, agent.ErrUnavailable) {
		t.Fatalf("Run: %v, want ErrUnavailable", err)
	}
	if rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, "ran longer than the session limit of 3s, waiting for its model, and was killed") {
		t.Fatalf("report = %+v, want failed for the timeout", rep)
	}
	pids := readPids(t, pidFile)
	if len(pids) != 2 {
		t.Fatalf("pids = %v, want the shell and its child", pids)
	}
	if left := testkit.NoneIn(dir); len(left) > 0 {
		t.Errorf("processes %v outlived the session (the shell ignores SIGTERM, so only SIGKILL ends it)", left)
	}
}

// TestCLITimeoutWhoseFault: a session past its limit while the agent's
// command runs is the agent's failed session; while it waits for its
// model after a command finished, the provider's (agent.ErrUnavailable).
// Either way its whole process group is killed.
func TestCLITimeoutWhoseFault(t *testing.T) {
	needProc(t)
	cases := []struct {
		name     string
		out      OutputFormat
		args     []string
		provider bool
		want     string
	}{
		{"claude in a command", claude.Output, []string{"hang-in-tool", "claude"}, false, "while running Bash"},
		{"codex in a command", codex.Output, []string{"hang-in-tool", "codex"}, false, "while running command go test ./..."},
		{"codex waiting for the model", codex.Output, []string{"hang-after-tool"}, true, "waiting for its model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pids")
			d := newCLI(t, Options{
				Template:  fakeAgent(t, c.out, c.args[0], append(c.args[1:], pidFile)...),
				Timeout:   3 * time.Second,
				KillGrace: 100 * time.Millisecond,
			})
			rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "hang"})
			if got := errors.Is(err, agent.ErrUnavailable); got != c.provider || (!c.provider && err != nil) {
				t.Fatalf("Run error %v; want the provider's fault: %v; report %+v", err, c.provider, rep)
			}
			if rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, "session limit of 3s") || !strings.Contains(rep.Error, c.want) {
				t.Fatalf("report error %q, want failed for the session limit %s", rep.Error, c.want)
			}
			if pids := readPids(t, pidFile); len(pids) != 2 {
				t.Fatalf("pids = %v, want the shell and its child", pids)
			}
			if left := testkit.NoneIn(dir); len(left) > 0 {
				t.Errorf("processes %v outlived the session", left)
			}
		})
	}
}

func TestCLIKillsLeftoversAtExit(t *testing.T) {
	needProc(t)
	dir := t.TempDir() // the pids go in the repository, where a confined agent can write
	pidFile := filepath.Join(dir, "pids")
	d := newCLI(t, Options{Template: fakeAgent(t, OutputText, "leftover", pidFile)})
	// The agent does not read its 1 MiB prompt and its child keeps stdin
	// open: Run must not wait on either.
	prompt := strings.Repeat("x", 1<<20)
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: prompt})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusCompleted || rep.Output != "done" {
		t.Fatalf("report = %+v, want completed with output done", rep)
	}
	if pids := readPids(t, pidFile); len(pids) != 2 {
		t.Fatalf("pids = %v, want the shell and its child", pids)
	}
	if left := testkit.NoneIn(dir); len(left) > 0 {
		t.Errorf("the background child %v outlived the session", left)
	}
}

func TestCLICancelIsAnError(t *testing.T) {
	dir := t.TempDir() // the pids go in the repository, where a confined agent can write
	pidFile := filepath.Join(dir, "pids")
	d := newCLI(t, Options{Template: fakeAgent(t, OutputText, "hang", pidFile), KillGrace: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil { // cancel once the agent is up
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := d.Run(ctx, agent.Session{Role: agent.RoleDeveloper, Dir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	if runtime.GOOS == "linux" {
		if left := testkit.NoneIn(dir); len(left) > 0 {
			t.Errorf("processes %v outlived the cancelled session", left)
		}
	}
}

// Garbage on stdout: with exit status 0 the whole of stdout is the output
// (the raw-text fallback); with a non-zero status the report is failed and
// carries stdout and stderr.
func TestCLIGarbageOutput(t *testing.T) {
	for _, format := range []OutputFormat{claude.Output, codex.Output} {
		t.Run(string(format)+"/exit0", func(t *testing.T) {
			d := newCLI(t, Options{Template: fakeAgent(t, format, "garbage", "0")})
			rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleReviewer, Dir: t.TempDir()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Status != agent.StatusCompleted || rep.Output != "this is not json {" || rep.Error != "" {
				t.Fatalf("report = %+v, want completed with the raw stdout", rep)
			}
		})
		t.Run(string(format)+"/exit3", func(t *testing.T) {
			d := newCLI(t, Options{Template: fakeAgent(t, format, "garbage", "3")})
			rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, want := range []string{"exited with status 3", "this is not json {", "neither is this"} {
				if rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, want) {
					t.Fatalf("report = %+v, want failed with %q in Error", rep, want)
				}
			}
		})
	}
}

func TestCLIReportedErrorIsFailedReport(t *testing.T) {
	d := newCLI(t, Options{Template: fakeAgent(t, claude.Output, "claude-error")})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, "API Error: 400 invalid_request_error") ||
		!strings.Contains(rep.Error, "exited with status 1") || rep.SessionID != "s-err" {
		t.Fatalf("report = %+v, want failed with the API error and the session id", rep)
	}
	if rep.Summary != "API Error: 400 invalid_request_error" {
		t.Errorf("Summary = %q", rep.Summary)
	}
}

// An overloaded provider (Claude Code's "API Error: 529") is the machine's
// fault: Run returns the failed report with agent.ErrUnavailable.
func TestCLIOverloadedProviderIsUnavailable(t *testing.T) {
	d := newCLI(t, Options{Template: fakeAgent(t, claude.Output, "claude-overloaded")})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
	if !errors.Is(err, agent.ErrUnavailable) || !strings.Contains(err.Error(), "529 overloaded") {
		t.Fatalf("Run: %v, want agent.ErrUnavailable naming the 529", err)
	}
	if rep.Status != agent.StatusFailed || rep.SessionID != "s-err" {
		t.Fatalf("report = %+v, want failed with the session id", rep)
	}
}

func TestCLICannotStart(t *testing.T) {
	d := newCLI(t, Options{Template: Template{Command: []string{"gaffer-no-such-agent-xyz"}}})
	_, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "gaffer-no-such-agent-xyz: start: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run error = %v, want a one-line start error", err)
	}
	_, err = d.Run(context.Background(), agent.Session{Role: "boss", Dir: t.TempDir()})
	if !errors.Is(err, agent.ErrUnknownRole) {
		t.Fatalf("Run error = %v, want ErrUnknownRole", err)
	}
}

func TestCLIPlaceholdersAndPrompt(t *testing.T) {
	dir := t.TempDir()
	base := fakeAgent(t, OutputText, "argv")
	cases := []struct {
		name      string
		tmpl      Template
		model     string
		session   string
		wantArgs  []string
		wantInOut string
	}{
		{
			name:     "stdin, no model, fresh",
			tmpl:     Template{Command: append(base.Command, "--model={model}", "--dir={dir}"), ResumeCommand: append(base.Command, "--resume", "{session}")},
			wantArgs: []string{"--dir=" + dir},
		},
		{
			name:     "stdin, model, resumed",
			tmpl:     Template{Command: append(base.Command, "--model={model}"), ResumeCommand: append(base.Command, "--model={model}", "--resume", "{session}")},
			model:    "m1",
			session:  "s1",
			wantArgs: []string{"--model=m1", "--resume", "s1"},
		},
		{
			name:     "no resume command starts fresh",
			tmpl:     Template{Command: append(base.Command, "x{session}")},
			session:  "s1",
			wantArgs: nil,
		},
		{
			name:      "file",
			tmpl:      Template{Command: append(base.Command, "file", "{prompt_file}"), Prompt: PromptFile},
			wantArgs:  []string{"file"},
			wantInOut: "THE PROMPT {dir}",
		},
		{
			name:     "arg",
			tmpl:     Template{Command: append(base.Command, "-p", "{prompt}"), Prompt: PromptArg},
			wantArgs: []string{"-p", "THE PROMPT {dir}"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.tmpl.Env = map[string]string{"GAFFER_TEST_DIR": "{dir}"}
			d := newCLI(t, Options{Template: c.tmpl, Model: c.model, Environ: []string{"PATH=" + os.Getenv("PATH")}})
			rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "THE PROMPT {dir}", SessionID: c.session})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var args []string
			for _, line := range strings.Split(rep.Output, "\n") {
				if a, ok := strings.CutPrefix(line, "arg:"); ok {
					args = append(args, a)
				}
			}
			if len(args) > 0 && c.tmpl.Prompt == PromptFile {
				args = args[:1] // the file's path is random
			}
			if !slices.Equal(args, c.wantArgs) {
				t.Errorf("args = %q, want %q", args, c.wantArgs)
			}
			if c.tmpl.Prompt != PromptArg && !strings.Contains(rep.Output, "THE PROMPT {dir}") {
				t.Errorf("output %q does not hold the prompt", rep.Output)
			}
			if !strings.Contains(rep.Output, "env:GAFFER_TEST_DIR="+dir) {
				t.Errorf("output %q: template env not expanded", rep.Output)
			}
			wantSession := ""
			if c.session != "" && len(c.tmpl.ResumeCommand) > 0 {
				wantSession = c.session
			}
			if rep.SessionID != wantSession {
				t.Errorf("SessionID = %q, want %q", rep.SessionID, wantSession)
			}
		})
	}
}

func TestCLIRedactsSecrets(t *testing.T) {
	const key = "sk-very-secret-value-123"
	d := newCLI(t, Options{
		Template: fakeAgent(t, OutputText, "leak"),
		Environ:  []string{"PATH=" + os.Getenv("PATH")},
		Env:      map[string]string{"SECRET_API_KEY": key},
	})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusFailed || strings.Contains(rep.Error, key) || !strings.Contains(rep.Error, "[redacted SECRET_API_KEY]") {
		t.Fatalf("report = %+v, want failed with the key redacted", rep)
	}
}

func TestCLIFilesChanged(t *testing.T) {
	dir := testkit.GitRepo(t)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("dirty.txt", "before\n")   // untracked before the session, changed by it
	write("same.txt", "untouched\n") // untracked before and after, unchanged
	tmpl := Template{Command: []string{"sh", "-c", "echo after > dirty.txt && mkdir -p sub && echo new > sub/new.txt && echo ok"}}
	d := newCLI(t, Options{Template: tmpl})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := []string{"dirty.txt", "sub/new.txt"}; !slices.Equal(rep.FilesChanged, want) {
		t.Fatalf("FilesChanged = %q, want %q", rep.FilesChanged, want)
	}
	// Not a git work tree: no files.
	rep, err = d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
	if err != nil || rep.FilesChanged != nil {
		t.Fatalf("outside git: FilesChanged = %q, err = %v", rep.FilesChanged, err)
	}
}

func TestCLICostFromPrices(t *testing.T) {
	// Codex reports no cost: the Cost function prices its usage.
	lines := `{"type":"thread.started","thread_id":"th-1"}
{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":400,"output_tokens":100}}`
	tmpl := Template{Command: []string{"sh", "-c", "cat <<'EOF'\n" + lines + "\nEOF"}, Output: codex.Output}
	var gotModel string
	d := newCLI(t, Options{Template: tmpl, Model: "gpt-x", Cost: func(model string, u state.Usage) float64 {
		gotModel = model
		return float64(u.InputTokens+u.OutputTokens+u.CachedTokens) / 1000
	}})
	var msgs []agent.Message
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir(), OnMessage: func(m agent.Message) { msgs = append(msgs, m) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := state.Usage{InputTokens: 600, CachedTokens: 400, OutputTokens: 100, CostUSD: 1.1}
	if rep.Usage != want || gotModel != "gpt-x" || rep.SessionID != "th-1" {
		t.Fatalf("usage = %+v (model %q, session %q), want %+v", rep.Usage, gotModel, rep.SessionID, want)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Kind != agent.UsageUpdate || msgs[len(msgs)-1].Usage != want {
		t.Fatalf("messages = %+v, want a final usage update", msgs)
	}
}

func TestCLITemplateValidate(t *testing.T) {
	for name, tmpl := range BuiltinTemplates() {
		if err := CheckTemplate(tmpl); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
	bad := map[string]Template{
		"empty":                 {},
		"unknown output":        {Command: []string{"x"}, Output: "xml"},
		"unknown prompt":        {Command: []string{"x"}, Prompt: "pipe"},
		"arg without {prompt}":  {Command: []string{"x"}, Prompt: PromptArg},
		"file without its path": {Command: []string{"x", "{prompt}"}, Prompt: PromptFile},
		"stdin with {prompt}":   {Command: []string{"x", "{prompt}"}},
		"resume without id":     {Command: []string{"x"}, ResumeCommand: []string{"x", "--resume"}},
	}
	for name, tmpl := range bad {
		if err := CheckTemplate(tmpl); !errors.Is(err, ErrInvalidTemplate) {
			t.Errorf("%s: CheckTemplate = %v, want ErrInvalidTemplate", name, err)
		}
		if _, err := NewDriver(Options{Template: tmpl}); !errors.Is(err, ErrInvalidTemplate) {
			t.Errorf("%s: NewDriver = %v, want ErrInvalidTemplate", name, err)
		}
	}
}

func TestClaudeArgv(t *testing.T) {
	v := placeholders{prompt: "p", dir: "/r", model: "", session: ""}
	args, resuming := argv(claude.New().Template(), v)
	want := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}
	if !slices.Equal(args, want) || resuming {
		t.Errorf("fresh argv = %q (resuming %v), want %q", args, resuming, want)
	}
	v.model, v.session, v.maxTurns = "opus", "abc", "7"
	args, resuming = argv(claude.New().Template(), v)
	want = []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model=opus", "--max-turns=7", "--resume", "abc"}
	if !slices.Equal(args, want) || !resuming {
		t.Errorf("resume argv = %q (resuming %v), want %q", args, resuming, want)
	}
}

func TestCLIWithholdsSecrets(t *testing.T) {
	tmpl := fakeAgent(t, OutputText, "argv")
	environ := []string{"PATH=" + os.Getenv("PATH"), "SECRET_API_KEY=from-env", "GITHUB_TOKEN=gh-secret", "PLAIN=1"}
	for _, pass := range []bool{false, true} {
		tmpl.PassEnv = nil
		if pass {
			tmpl.PassEnv = []string{"SECRET_API_KEY"}
		}
		d := newCLI(t, Options{Template: tmpl, Environ: environ})
		rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := strings.Contains(rep.Output, "env:SECRET_API_KEY=from-env"); got != pass {
			t.Errorf("PassEnv %q: the agent got SECRET_API_KEY: %v\n%s", tmpl.PassEnv, got, rep.Output)
		}
	}
	// What Options.Env sets is passed even when it looks secret.
	tmpl.PassEnv = nil
	d := newCLI(t, Options{Template: tmpl, Environ: environ, Env: map[string]string{"SECRET_API_KEY": "explicit"}})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir()})
	if err != nil || !strings.Contains(rep.Output, "env:SECRET_API_KEY=explicit") {
		t.Fatalf("explicit Env not passed: %v\n%s", err, rep.Output)
	}
}

// Messages reach OnMessage while the agent runs: the stand-in does not
// finish until the test has seen its first message.
func TestCLIStreamsMessages(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "seen")
	d := newCLI(t, Options{Template: fakeAgent(t, codex.Output, "stream", seen), Timeout: 20 * time.Second, KillGrace: 50 * time.Millisecond})
	var texts []string
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir(), OnMessage: func(m agent.Message) {
		if m.Kind == agent.Text {
			texts = append(texts, m.Text)
			if err := os.WriteFile(seen, nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Status != agent.StatusCompleted || rep.Output != "finished" || rep.SessionID != "th-s" {
		t.Fatalf("report = %+v, want completed (the first message was not streamed while the agent ran)", rep)
	}
	if !slices.Equal(texts, []string{"working on it", "finished"}) {
		t.Errorf("texts = %q, want each message once, in order", texts)
	}
}
