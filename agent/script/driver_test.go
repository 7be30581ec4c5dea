package script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
	"github.com/gaffer-dev/gaffer/state"
)

// runSession runs one session of d in dir and collects its messages.
func runSession(t *testing.T, d *Driver, s agent.Session) (agent.Report, []agent.Message, error) {
	t.Helper()
	var msgs []agent.Message
	s.OnMessage = func(m agent.Message) { msgs = append(msgs, m) }
	if s.RunID == "" {
		s.RunID = "r1"
	}
	rep, err := d.Run(context.Background(), s)
	return rep, msgs, err
}

func dev(phase, attempt, iteration int, dir string) agent.Session {
	return agent.Session{Role: agent.RoleDeveloper, Phase: phase, Attempt: attempt, Iteration: iteration, Dir: dir}
}

func TestScriptDeveloperActions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("scratch"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := &Script{Developer: []DeveloperStep{{
		Match: Match{Phase: 1},
		Actions: []Action{
			{Write: &WriteAction{Path: "calc.go", Content: "package calc\n\nfunc Add(a, b int) int { return a + b }\n"}},
			{Write: &WriteAction{Path: "go.mod", Content: "module example.com/calc\n\ngo 1.22\n"}},
			{Edit: &EditAction{Path: "calc.go", Old: "a + b", New: "b + a"}},
			{Delete: "notes.txt"},
			{Mkdir: "internal/x"},
			{Run: "cat calc.go && ls internal"},
		},
		Summary: "Implemented Add",
		Usage:   state.Usage{InputTokens: 7},
	}}}
	var out strings.Builder
	d := NewDriver(script, Options{Stdout: &out})
	rep, msgs, err := runSession(t, d, dev(1, 1, 1, dir))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != agent.StatusCompleted || rep.Summary != "Implemented Add" || rep.Error != "" {
		t.Fatalf("report = %+v", rep)
	}
	if got := strings.Join(rep.FilesChanged, ","); got != "calc.go,go.mod,notes.txt" {
		t.Errorf("FilesChanged = %s", got)
	}
	if rep.SessionID != "script-r1-p1-a1" || rep.Usage.InputTokens != 7 {
		t.Errorf("session id %q, usage %+v", rep.SessionID, rep.Usage)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, "calc.go")); !strings.Contains(got, "return b + a") {
		t.Errorf("calc.go = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("notes.txt still exists")
	}
	if fi, err := os.Stat(filepath.Join(dir, "internal", "x")); err != nil || !fi.IsDir() {
		t.Errorf("internal/x: %v", err)
	}
	// One call and one result per action, then the summary and the usage.
	var kinds []string
	for _, m := range msgs {
		kinds = append(kinds, m.Kind.String()+":"+m.Tool)
	}
	want := "tool_call:write tool_result:write tool_call:write tool_result:write tool_call:edit tool_result:edit " +
		"tool_call:delete tool_result:delete tool_call:mkdir tool_result:mkdir tool_call:run tool_result:run text: usage:"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("messages:\n got %s\nwant %s", got, want)
	}
	if msgs[0].Input != "calc.go" || msgs[0].Text != "write calc.go" {
		t.Errorf("first tool call = %+v", msgs[0])
	}
	if r := msgs[11]; r.IsError || !strings.Contains(r.Text, "return b + a") {
		t.Errorf("run result = %+v", r)
	}
	for _, line := range []string{"[developer p1 a1 i1] write calc.go", "[developer p1 a1 i1] run cat calc.go", "func Add"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("stdout lacks %q:\n%s", line, out.String())
		}
	}
}

func TestScriptDeveloperFailures(t *testing.T) {
	const content = "x := a + b\ny := a + b\n"
	tests := []struct {
		name    string
		actions []Action
		want    []string // in Error
		files   string   // FilesChanged
	}{
		{"edit text absent", []Action{{Edit: &EditAction{Path: "f.go", Old: "a * b", New: "c"}}},
			[]string{"action 1 of 1", "edit f.go", "old text not found"}, ""},
		{"edit ambiguous", []Action{{Edit: &EditAction{Path: "f.go", Old: "a + b", New: "c"}}},
			[]string{"ambiguous", "occurs 2 times"}, ""},
		{"command fails", []Action{{Write: &WriteAction{Path: "g.go", Content: "g"}}, {Run: "echo the test output; echo FAIL >&2; exit 1"}, {Delete: "f.go"}},
			[]string{"action 2 of 3", "exited with code 1", "the test output", "FAIL"}, "g.go"},
		{"parent escape", []Action{{Write: &WriteAction{Path: "../x", Content: "x"}}},
			[]string{"write ../x", "escapes the repository", `".."`}, ""},
		{"absolute path", []Action{{Edit: &EditAction{Path: "/etc/passwd", Old: "root", New: "toor"}}},
			[]string{"edit /etc/passwd", "escapes the repository", "absolute"}, ""},
		{"symlink escape", []Action{{Write: &WriteAction{Path: "out/x.txt", Content: "x"}}},
			[]string{"escapes the repository", "symbolic link out points outside"}, ""},
		{"deleting outside", []Action{{Delete: "out/secret.txt"}},
			[]string{"escapes the repository"}, ""},
		{"git is protected", []Action{{Mkdir: ".git/hooks"}},
			[]string{"inside .git"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
				t.Fatal(err)
			}
			d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: tt.actions}}}, Options{})
			rep, msgs, err := runSession(t, d, dev(1, 1, 1, dir))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Status != agent.StatusFailed {
				t.Fatalf("status %s, want failed", rep.Status)
			}
			for _, w := range tt.want {
				if !strings.Contains(rep.Error, w) {
					t.Errorf("Error %q lacks %q", rep.Error, w)
				}
			}
			if got := strings.Join(rep.FilesChanged, ","); got != tt.files {
				t.Errorf("FilesChanged = %q, want %q", got, tt.files)
			}
			if got := testkit.ReadFile(t, filepath.Join(dir, "f.go")); got != content {
				t.Error("f.go changed (a later action ran, or a failed edit wrote)")
			}
			if got := testkit.ReadFile(t, filepath.Join(outside, "secret.txt")); got != "s" {
				t.Error("the outside file changed")
			}
			if last := msgs[len(msgs)-2]; last.Kind != agent.ToolResult || !last.IsError {
				t.Errorf("the failing action's result is %+v", last)
			}
		})
	}
}

func TestScriptAllowFailure(t *testing.T) {
	dir := t.TempDir()
	d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: []Action{
		{Run: "exit 2", AllowFailure: true},
		{Write: &WriteAction{Path: "after.txt", Content: "ran"}},
	}}}}, Options{})
	rep, msgs, err := runSession(t, d, dev(1, 1, 1, dir))
	if err != nil || rep.Status != agent.StatusCompleted {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, "after.txt")); got != "ran" {
		t.Errorf("after.txt = %q", got)
	}
	if !msgs[1].IsError || !strings.Contains(msgs[1].Text, "exited with code 2") {
		t.Errorf("the allowed failure's result = %+v", msgs[1])
	}
}

func TestScriptRunHasNoSecrets(t *testing.T) {
	t.Setenv("FOO_API_KEY", "sk-test-1234")
	t.Setenv("SOME_TOKEN", "tok-5678")
	dir := t.TempDir()
	d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: []Action{{Run: "env > env.txt"}}}}}, Options{})
	if rep, _, err := runSession(t, d, dev(1, 1, 1, dir)); err != nil || rep.Status != agent.StatusCompleted {
		t.Fatalf("report %+v, %v", rep, err)
	}
	env := testkit.ReadFile(t, filepath.Join(dir, "env.txt"))
	for _, s := range []string{"FOO_API_KEY", "sk-test-1234", "SOME_TOKEN", "tok-5678"} {
		if strings.Contains(env, s) {
			t.Errorf("the command's environment has %s", s)
		}
	}
	if !strings.Contains(env, "PATH=") {
		t.Error("PATH is missing")
	}
}

func TestScriptScriptedResult(t *testing.T) {
	script := &Script{Developer: []DeveloperStep{
		{Match: Match{Phase: 1}, Error: "I could not make the tests pass"},
		{Match: Match{Phase: 2}, Result: agent.StatusFailed},
	}}
	d := NewDriver(script, Options{})
	rep, _, err := runSession(t, d, dev(1, 1, 1, t.TempDir()))
	if err != nil || rep.Status != agent.StatusFailed || rep.Error != "I could not make the tests pass" {
		t.Errorf("phase 1: %+v, %v", rep, err)
	}
	rep, _, err = runSession(t, d, dev(2, 1, 1, t.TempDir()))
	if err != nil || rep.Status != agent.StatusFailed || rep.Error == "" {
		t.Errorf("phase 2: %+v, %v", rep, err)
	}
}

func TestScriptMatching(t *testing.T) {
	step := func(m Match, summary string) DeveloperStep { return DeveloperStep{Match: m, Summary: summary} }
	script := &Script{Developer: []DeveloperStep{
		step(Match{}, "any"),
		step(Match{Phase: 2}, "phase 2"),
		step(Match{Phase: 2, Attempt: 2}, "phase 2 attempt 2"),
		step(Match{Attempt: 3}, "attempt 3"),
		step(Match{Phase: 3}, "phase 3"),
		step(Match{Phase: 3, Attempt: 1, Iteration: 2}, "phase 3 attempt 1 iteration 2"),
		step(Match{Iteration: 4}, "iteration 4"),
	}}
	d := NewDriver(script, Options{})
	tests := []struct {
		phase, attempt, iteration int
		want                      string
	}{
		{1, 1, 1, "any"},
		{2, 1, 1, "phase 2"},
		{2, 2, 1, "phase 2 attempt 2"},
		{2, 3, 1, "phase 2"}, // tie between "phase 2" and "attempt 3": the first in the file
		{5, 3, 1, "attempt 3"},
		{3, 1, 1, "phase 3"},
		{3, 1, 2, "phase 3 attempt 1 iteration 2"},
		{3, 2, 2, "phase 3"},
		{1, 1, 4, "iteration 4"},
	}
	for _, tt := range tests {
		rep, _, err := runSession(t, d, dev(tt.phase, tt.attempt, tt.iteration, t.TempDir()))
		if err != nil || rep.Summary != tt.want {
			t.Errorf("phase %d attempt %d iteration %d: got %q (%v), want %q", tt.phase, tt.attempt, tt.iteration, rep.Summary, err, tt.want)
		}
	}
}

func TestScriptDefaults(t *testing.T) {
	dir := t.TempDir()
	d := NewDriver(nil, Options{})
	rep, _, err := runSession(t, d, dev(1, 1, 1, dir))
	if err != nil || rep.Status != agent.StatusCompleted || len(rep.FilesChanged) != 0 {
		t.Errorf("developer default: %+v, %v", rep, err)
	}
	rep, _, err = runSession(t, d, agent.Session{Role: agent.RoleReviewer, Phase: 1, Attempt: 1, Iteration: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r, perr := agent.ParseReview(rep.Output); perr != nil || !r.Approved || r.Comments != "LGTM" || len(r.Items) != 0 {
		t.Errorf("reviewer default: %+v, %v (output %q)", r, perr, rep.Output)
	}
	if _, _, err := runSession(t, d, agent.Session{Role: agent.RoleArchitect, Dir: dir}); !errors.Is(err, ErrNotScripted) {
		t.Errorf("architect default: %v, want ErrNotScripted", err)
	}
	if _, _, err := runSession(t, d, agent.Session{Role: agent.RoleEvaluator, Phase: 1, Dir: dir}); !errors.Is(err, ErrNotScripted) {
		t.Errorf("evaluator default: %v, want ErrNotScripted", err)
	}
	if _, _, err := runSession(t, d, agent.Session{Role: "tester", Dir: dir}); !errors.Is(err, agent.ErrUnknownRole) {
		t.Errorf("unknown role: %v", err)
	}
	if _, _, err := runSession(t, d, agent.Session{Role: agent.RoleDeveloper, Dir: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing repository is not an error")
	}
}

func TestScriptReviewerAndEvaluator(t *testing.T) {
	script := &Script{
		Reviewer: []ReviewerStep{{
			Match: Match{Phase: 2, Iteration: 1}, Comments: "Sub is wrong for negative numbers",
			Items: []agent.ReviewItem{{Text: "fix Sub", Disposition: "implement"}, {Text: "rename pkg", Disposition: agent.DispositionDefer, Reason: "out of scope"}},
			Usage: state.Usage{OutputTokens: 3},
		}},
		Evaluator: []EvaluatorStep{{Match: Match{Phase: 2}, Items: []agent.ReviewItem{{Text: "fix Sub", Disposition: agent.DispositionImplement}, {Text: "rename pkg", Disposition: agent.DispositionReject}}}},
	}
	d := NewDriver(script, Options{})
	s := agent.Session{Role: agent.RoleReviewer, Phase: 2, Attempt: 1, Iteration: 1, Dir: t.TempDir()}
	rep, msgs, err := runSession(t, d, s)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.ParseReview(rep.Output)
	if err != nil {
		t.Fatalf("ParseReview(%q): %v", rep.Output, err)
	}
	if r.Approved || r.Comments != "Sub is wrong for negative numbers" || len(r.Items) != 2 || r.Items[0].Disposition != agent.DispositionImplement || r.Items[1].Reason != "out of scope" {
		t.Errorf("review = %+v", r)
	}
	if rep.SessionID != "script-r1-reviewer-p2-a1-i1" || rep.Usage.OutputTokens != 3 || !strings.HasPrefix(rep.Summary, "changes requested") {
		t.Errorf("report = %+v", rep)
	}
	if len(msgs) != 2 || msgs[0].Kind != agent.Text || msgs[1].Kind != agent.UsageUpdate {
		t.Errorf("messages = %+v", msgs)
	}
	s.Iteration = 2 // no entry: approved
	if rep, _, _ := runSession(t, d, s); !strings.Contains(rep.Output, `"approved": true`) {
		t.Errorf("iteration 2 = %s", rep.Output)
	}
	s.Role, s.Iteration = agent.RoleEvaluator, 1
	rep, _, err = runSession(t, d, s)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := agent.ParseEvaluation(rep.Output)
	if err != nil || len(ev.Items) != 2 || ev.Items[1].Disposition != agent.DispositionReject {
		t.Errorf("evaluation = %+v, %v", ev, err)
	}
	if rep.Summary != "1 to implement, 1 rejected, 0 deferred" {
		t.Errorf("summary = %q", rep.Summary)
	}
}

func TestScriptArchitect(t *testing.T) {
	scriptDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(scriptDir, "plan.md"), []byte("# First plan\n### Task 1: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := &Script{Dir: scriptDir, Architect: []ArchitectStep{
		{PlanFile: "plan.md"},
		{Error: "I cannot plan this"},
		{Plan: "# Third plan\n", Summary: "third"},
	}}
	d := NewDriver(script, Options{})
	want := []struct {
		status agent.Status
		output string
	}{
		{agent.StatusCompleted, "# First plan\n### Task 1: a\n"},
		{agent.StatusFailed, ""},
		{agent.StatusCompleted, "# Third plan\n"},
		{agent.StatusCompleted, "# Third plan\n"}, // the last entry repeats
	}
	for rev, w := range want {
		rep, _, err := runSession(t, d, agent.Session{Role: agent.RoleArchitect, Revision: rev, Dir: t.TempDir()})
		if err != nil || rep.Status != w.status || rep.Output != w.output {
			t.Errorf("revision %d: %+v, %v", rev, rep, err)
		}
		if rep.SessionID != "script-r1-architect-r"+string(rune('0'+rev)) {
			t.Errorf("revision %d: session id %q", rev, rep.SessionID)
		}
	}
	if rep, _, _ := runSession(t, d, agent.Session{Role: agent.RoleArchitect, Dir: t.TempDir()}); rep.Summary != "plan revision 0: First plan" {
		t.Errorf("summary = %q", rep.Summary)
	}
}

func TestScriptKeepsSessionID(t *testing.T) {
	d := NewDriver(nil, Options{})
	s := dev(1, 1, 2, t.TempDir())
	s.SessionID = "continued-42"
	if rep, _, err := runSession(t, d, s); err != nil || rep.SessionID != "continued-42" {
		t.Errorf("session id = %q, %v", rep.SessionID, err)
	}
}

func TestScriptToolsAllowed(t *testing.T) {
	dir := t.TempDir()
	d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: []Action{{Write: &WriteAction{Path: "a.txt", Content: "a"}}}}}}, Options{})
	s := dev(1, 1, 1, dir)
	s.Tools = agent.DefaultTools(agent.RoleReviewer)
	rep, _, err := runSession(t, d, s)
	if err != nil || rep.Status != agent.StatusFailed || !strings.Contains(rep.Error, "not allowed") || !strings.Contains(rep.Error, `"write" tool`) {
		t.Errorf("report = %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a.txt was written")
	}
	s.Tools = agent.DefaultTools(agent.RoleDeveloper)
	if rep, _, err := runSession(t, d, s); err != nil || rep.Status != agent.StatusCompleted {
		t.Errorf("with developer tools: %+v, %v", rep, err)
	}
}

func TestScriptPaceCancelled(t *testing.T) {
	dir := t.TempDir()
	d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: []Action{{Write: &WriteAction{Path: "a.txt", Content: "a"}}}}}},
		Options{Pace: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	s := dev(1, 1, 1, dir)
	s.OnMessage = func(agent.Message) { t.Error("a message was sent while pacing") }
	// Cancel while Run sleeps before the first action (if the machine is
	// slow and Run starts late, it finds the ctx done at once: same result).
	stop := time.AfterFunc(20*time.Millisecond, cancel)
	defer stop.Stop()
	if _, err := d.Run(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the action ran after the cancel")
	}
	// Every role paces, and an already-cancelled ctx stops before anything.
	for _, role := range []agent.Role{agent.RoleArchitect, agent.RoleReviewer, agent.RoleEvaluator} {
		if _, err := d.Run(ctx, agent.Session{Role: role, Dir: dir}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", role, err)
		}
	}
}

func TestScriptCancelStopsCommand(t *testing.T) {
	dir := t.TempDir()
	d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: []Action{
		{Write: &WriteAction{Path: "a.txt", Content: "a"}},
		{Run: "sleep 30"},
		{Write: &WriteAction{Path: "b.txt", Content: "b"}},
	}}}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	s := dev(1, 1, 1, dir)
	s.OnMessage = func(m agent.Message) {
		if m.Kind == agent.ToolCall && m.Tool == "run" {
			go cancel()
		}
	}
	rep, err := d.Run(ctx, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if rep.Status != agent.StatusFailed || strings.Join(rep.FilesChanged, ",") != "a.txt" {
		t.Errorf("partial report = %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an action after the cancel ran")
	}
}

func TestScriptFromFile(t *testing.T) {
	path := writeScript(t, "demo.yaml", `
developer:
  - phase: 1
    actions:
      - write: {path: calc.go, content_file: files/calc.go}
      - run: go vet ./...
`, nil)
	if _, err := Load(path); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("loading with a missing content_file: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(filepath.Dir(path), "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "files", "calc.go"), []byte("package calc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/calc\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, err := runSession(t, NewDriver(script, Options{}), dev(1, 1, 1, repo))
	if err != nil || rep.Status != agent.StatusCompleted {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if got := testkit.ReadFile(t, filepath.Join(repo, "calc.go")); got != "package calc\n" {
		t.Errorf("calc.go = %q", got)
	}
}

func TestScriptInvalidInGo(t *testing.T) {
	d := NewDriver(&Script{Developer: []DeveloperStep{{Actions: []Action{{}}}}}, Options{})
	if _, _, err := runSession(t, d, dev(1, 1, 1, t.TempDir())); !errors.Is(err, ErrInvalid) {
		t.Errorf("an empty action: %v, want ErrInvalid", err)
	}
	bad := &Script{Reviewer: []ReviewerStep{{Items: []agent.ReviewItem{{Text: "x", Disposition: "SOON"}}}}}
	if err := bad.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "(in memory)") {
		t.Errorf("Validate = %v", err)
	}
}
