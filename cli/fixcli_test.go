package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/runview"
)

// noStore fails the test when dir has a store (gaffer wrote something).
func noStore(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a store was created in %s (stat: %v)", dir, err)
	}
}

func TestRunValidatesThePlanFirst(t *testing.T) {
	dir, _, script := demoRepo(t)
	bad := filepath.Join(t.TempDir(), "bad.md")
	if err := os.WriteFile(bad, []byte("# x\n\n### Task 1: impl\n- type: impl\n- depends on: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := gaffer(t, "--repo", dir, "run", "--plan", bad, "--script", script)
	want := fmt.Sprintf("%[1]s:3: task 1 is an impl task with no test task in its dependency chain (write the tests first, or turn the TDD check off)\n"+
		"%[1]s:5: task 1 depends on unknown task 2\n", bad)
	if code != ExitInvalid || out != want {
		t.Errorf("exit %d, output\n%s\nwant exit 3 and\n%s", code, out, want)
	}
	noStore(t, dir)
}

func TestRunHonoursTheProfilesTDDSetting(t *testing.T) {
	dir, _, script := demoRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "gaffer.yaml"), []byte("default_profile: loose\nprofiles:\n  loose:\n    tdd: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(t.TempDir(), "p.md")
	if err := os.WriteFile(plan, []byte("### Task 1: impl\n- type: impl\n- depends on: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The plan passes the up-front check; what happens next does not matter here.
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--allow-dirty")
	if code == ExitInvalid {
		t.Errorf("exit 3 with the TDD check off:\n%s", out)
	}
}

func TestRunUsageAndInputFiles(t *testing.T) {
	dir, plan, script := demoRepo(t)
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "nope.md")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "gaffer: give --plan FILE or --goal TEXT\nRun 'gaffer run --help' for usage.\n"},
		{[]string{"run", "--plan", plan, "--goal", "x", "--script", script}, "gaffer: give --plan FILE or --goal TEXT, not both\nRun 'gaffer run --help' for usage.\n"},
		{[]string{"run", "--plan", missing, "--script", script}, "gaffer: --plan " + missing + ": no such file\n"},
		{[]string{"run", "--plan", tmp, "--script", script}, "gaffer: --plan " + tmp + ": is a directory\n"},
		{[]string{"run", "--plan", plan, "--script", missing}, "gaffer: --script " + missing + ": no such file\n"},
		{[]string{"plan", "validate", tmp}, "gaffer: open " + tmp + ": is a directory\n"},
	} {
		out, code := gaffer(t, append([]string{"--repo", dir}, c.args...)...)
		if code != ExitUsage || out != c.want {
			t.Errorf("%v: exit %d, output %q; want exit 2 and %q", c.args, code, out, c.want)
		}
	}
	noStore(t, dir)
}

func TestMessagesWithoutPackagePrefix(t *testing.T) {
	dir, plan, script := demoRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte("package calc // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--in-place")
	if code != ExitPrecondition || !strings.HasPrefix(out, "gaffer: work tree has uncommitted changes (1 path: M doc.go) in ") {
		t.Errorf("exit %d, output %q", code, out)
	}
	err := exitf(ExitPrecondition, "%w: no run waiting in /s", ErrNoRun)
	if !errors.Is(err, ErrNoRun) {
		t.Error("errors.Is(ErrNoRun) lost")
	}
	var b strings.Builder
	Report(&b, fmt.Errorf("resume: %w", err))
	if got := b.String(); got != "gaffer: resume: no run fits: no run waiting in /s\n" {
		t.Errorf("Report = %q", got)
	}
}

// forEachFlag calls fn with every flag of every command, subcommands too.
func forEachFlag(cmds []*ucli.Command, path string, fn func(cmd string, f ucli.Flag)) {
	for _, c := range cmds {
		for _, f := range c.Flags {
			fn(path+c.Name, f)
		}
		forEachFlag(c.Subcommands, path+c.Name+" ", fn)
	}
}

func TestFlagUsageHasNoBackquotes(t *testing.T) {
	app := New("dev", &bytes.Buffer{}, &bytes.Buffer{})
	forEachFlag(app.Commands, "", func(cmd string, f ucli.Flag) {
		if u, ok := f.(ucli.DocGenerationFlag); ok && strings.Contains(u.GetUsage(), "`") {
			t.Errorf("%s --%s: usage %q has a backquote (urfave/cli takes it as the value's name)", cmd, f.Names()[0], u.GetUsage())
		}
	})
	out, _, code := run(t, "run", "--help")
	if code != ExitOK || !strings.Contains(out, "--detach ") || strings.Contains(out, "--detach gaffer serve") {
		t.Errorf("run --help: code %d\n%s", code, out)
	}
}

func TestEveryFlagReadsTheEnvironment(t *testing.T) {
	// The flags doc.go names as having no variable, and why.
	without := map[string]bool{"repo": true, "store": true, "profile": true, "plan": true, "goal": true, "run-id": true, "no-go-test": true,
		// ops.go: not yet.
		"detach": true, "watch": true, "interval": true}
	app := New("dev", &bytes.Buffer{}, &bytes.Buffer{})
	globals := map[string]bool{}
	for _, f := range app.Flags {
		globals[f.Names()[0]] = true
	}
	check := func(cmd string, f ucli.Flag) {
		name := f.Names()[0]
		want := "GAFFER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		var env []string
		if ef, ok := f.(interface{ GetEnvVars() []string }); ok {
			env = ef.GetEnvVars()
		}
		if vf, ok := f.(ucli.VisibleFlag); ok && !vf.IsVisible() && globals[name] {
			// A global flag given after the command (withTrailingGlobals):
			// its variable is the global's, read once, before the command.
			if len(env) > 0 {
				t.Errorf("%s --%s, the global's trailing copy, reads %v; want none", cmd, name, env)
			}
			return
		}
		switch {
		case without[name] && len(env) > 0:
			t.Errorf("%s --%s reads %v, but doc.go says it reads no variable", cmd, name, env)
		case !without[name] && (len(env) != 1 || env[0] != want):
			t.Errorf("%s --%s reads %v, want [%s]", cmd, name, env, want)
		}
	}
	forEachFlag(app.Commands, "", check)
	t.Setenv("GAFFER_JSON", "true")
	if out, _, code := run(t, "plan", "validate", demoPlan); code != ExitOK || !strings.HasPrefix(out, "{") {
		t.Errorf("GAFFER_JSON=true plan validate: code %d\n%s", code, out)
	}
}

func TestReadOnlyCommandsCreateNoStore(t *testing.T) {
	dir, _, _ := demoRepo(t)
	store := filepath.Join(dir, ".git", "gaffer")
	want := "no runs in this repository (no store at " + store + ")"
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"status"}, ExitPrecondition, "gaffer: " + want + "\n"},
		{[]string{"status", "--json"}, ExitPrecondition, "gaffer: " + want + "\n"},
		{[]string{"history"}, ExitPrecondition, "gaffer: " + want + "\n"},
		{[]string{"list"}, ExitOK, want + "\n"},
		{[]string{"list", "--json"}, ExitOK, "[]\n"},
	} {
		out, code := gaffer(t, append([]string{"--repo", dir}, c.args...)...)
		if code != c.code || out != c.out {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", c.args, code, out, c.code, c.out)
		}
	}
	noStore(t, dir)
}

func TestHistoryJSONAndNewestRun(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	id := statusJSON(t, "--repo", dir).RunID
	text, code := gaffer(t, "--repo", dir, "history")
	if code != ExitOK || !strings.HasPrefix(text, "SEQ") {
		t.Fatalf("history without RUN: exit %d\n%s", code, text)
	}
	out, code := gaffer(t, "--repo", dir, "history", id, "--json")
	var views []CheckpointView
	if err := json.Unmarshal([]byte(out), &views); err != nil || code != ExitOK || len(views) < 2 {
		t.Fatalf("history --json: exit %d, %v\n%s", code, err, out)
	}
	newest := views[0]
	if newest.Seq <= views[len(views)-1].Seq || newest.Status != "awaiting_approval" || newest.Interrupt == "" ||
		newest.Parent != views[1].Seq || newest.Time.IsZero() || len(views[1].Ran) == 0 {
		t.Errorf("history --json = %+v", views)
	}
	if !strings.Contains(out, `"next": [`) || !strings.Contains(out, `"step": `) {
		t.Errorf("history --json lacks fields:\n%s", out)
	}
}

func TestTerminalPromptTakesOnlyOfferedAnswers(t *testing.T) {
	dir, plan, script := demoRepo(t)
	// n is not offered: asked again; r then no: asked again; r then y: rejected.
	var buf bytes.Buffer
	app := NewWithIO("test", IO{In: strings.NewReader("n\nr\nn\nr\ny\n"), Out: &buf, Err: &buf, Terminal: func() bool { return true }})
	inProcess.Lock() // see inProcess
	err := app.RunContext(context.Background(), []string{"gaffer", "--repo", dir, "run", "--plan", plan, "--script", script})
	inProcess.Unlock()
	out := buf.String()
	if code := ExitCode(err); code != ExitRejected {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if n := strings.Count(out, "Approve this plan?"); n != 3 {
		t.Errorf("asked %d times, want 3:\n%s", n, out)
	}
	if n := strings.Count(out, "Reject the plan for good"); n != 2 || !strings.Contains(out, `not "n"`) {
		t.Errorf("confirmations %d, want 2:\n%s", n, out)
	}
}

func TestApprovalAnswer(t *testing.T) {
	for _, c := range []struct {
		line, next string
		want       nodes.Answer
		done       bool
	}{
		{"a", "", nodes.Answer{Approved: true}, true},
		{" Approve\n", "", nodes.Answer{Approved: true}, true},
		{"y", "", nodes.Answer{}, false},
		{"yes", "", nodes.Answer{}, false},
		{"n", "", nodes.Answer{}, false},
		{"no", "y", nodes.Answer{}, false},
		{"", "", nodes.Answer{}, false},
		{"r", "", nodes.Answer{}, false},
		{"reject", "N", nodes.Answer{}, false},
		{"r", "yes", nodes.Answer{}, true},
		{"f", "split it", nodes.Answer{Feedback: "split it"}, true},
		{"feedback", " ", nodes.Answer{}, false},
	} {
		var out bytes.Buffer
		read := func(context.Context) (string, *nodes.Answer, bool) { return c.next + "\n", nil, c.next != "" }
		got, done := approvalAnswer(context.Background(), &out, read, c.line)
		if got != c.want || done != c.done {
			t.Errorf("%q then %q: %+v, %v; want %+v, %v", c.line, c.next, got, done, c.want, c.done)
		}
	}
	// An answer given in another terminal while the prompt asks for the
	// confirmation or the feedback wins.
	for _, line := range []string{"r", "f"} {
		remote := nodes.Answer{Approved: true}
		read := func(context.Context) (string, *nodes.Answer, bool) { return "", &remote, true }
		got, done := approvalAnswer(context.Background(), io.Discard, read, line)
		if got != remote || !done {
			t.Errorf("%q then an answer from another terminal: %+v, %v; want %+v, true", line, got, done, remote)
		}
	}
}

func TestStatusTellsAStoppedRun(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	p := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script,
		"--auto-approve", "--pace", "300ms", "--run-id", "r-stop"}, "")
	// While the run goes, status (answered by the run's process) does not call it stopped.
	cl := control.NewClient(filepath.Join(dir, ".git", "gaffer"))
	var v runview.Run
	for deadline := time.Now().Add(60 * time.Second); ; {
		if _, err := cl.Ping(t.Context()); err == nil {
			if v, _ = statusOf(t, bin, dir, "r-stop"); v.Status == "running" && v.CurrentPhase > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start: %+v", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v.Stopped {
		t.Errorf("a run going on is stopped: %+v", v)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	v = statusJSON(t, "--repo", dir)
	if v.Status != "running" || !v.Stopped {
		t.Errorf("after the run's process was killed: %+v", v)
	}
	out, _ := gaffer(t, "--repo", dir, "status")
	if !strings.Contains(out, "status:    running (stopped: no process runs it)\nstopped:   interrupted at ") ||
		!strings.Contains(out, "\nresume:    gaffer --repo "+dir+" resume r-stop continues it\n") {
		t.Errorf("status:\n%s", out)
	}
	out, _ = gaffer(t, "--repo", dir, "list", "--json")
	if !strings.Contains(out, `"stopped": true`) {
		t.Errorf("list --json:\n%s", out)
	}
	out, _ = gaffer(t, "--repo", dir, "list")
	if !strings.Contains(out, "\nr-stop  stopped  ") || !strings.Contains(out, "\nstopped: no process runs it; ") {
		t.Errorf("list:\n%s", out)
	}
}

func TestSubmitChecksItsInputs(t *testing.T) {
	dir, plan, _ := demoRepo(t)
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"submit", "--plan", plan, "--goal", "x"}, "not both"},
		{[]string{"submit", "--plan", plan, "--script", missing}, "gaffer: --script " + missing + ": no such file\n"},
	} {
		out, code := gaffer(t, append([]string{"--repo", dir}, c.args...)...)
		if code != ExitUsage || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 and %q", c.args, code, out, c.want)
		}
	}
}

// TestReadOnlyCommandsCreateNoStoreInAnEmptyDir gives status, history and
// list an empty directory as --store, through a symbolic link (a
// directory made ready for a store, a shared one). They used to create a
// store in it and make it 0700; they must answer that there is no run and
// leave the directory empty, its mode as it was.
func TestReadOnlyCommandsCreateNoStoreInAnEmptyDir(t *testing.T) {
	dir, _, _ := demoRepo(t)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(empty, fs.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "store")
	if err := os.Symlink(empty, link); err != nil {
		t.Fatal(err)
	}
	want := "no runs in this repository (no store at " + link + ")"
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"status"}, ExitPrecondition, "gaffer: " + want + "\n"},
		{[]string{"history"}, ExitPrecondition, "gaffer: " + want + "\n"},
		{[]string{"list"}, ExitOK, want + "\n"},
	} {
		out, code := gaffer(t, append([]string{"--repo", dir, "--store", link}, c.args...)...)
		if code != c.code || out != c.out {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", c.args, code, out, c.code, c.out)
		}
	}
	entries, err := os.ReadDir(empty)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(empty)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 || info.Mode()&(fs.ModePerm|fs.ModeSticky) != 0o777|fs.ModeSticky {
		t.Errorf("the empty directory now holds %d files, mode %v; want none and drwxrwxrwt", len(entries), info.Mode())
	}
}
