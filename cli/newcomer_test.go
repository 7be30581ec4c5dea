package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/runview"
)

// The tests of issue 10's "approving blind" and "conventions": what a new
// user sees, as text and exit codes.

// demoPlanText is what `plan show` prints for the demo's plan before its
// text as written.
const demoPlanHead = `Plan of run r-plan (revision 0, phased mode, 6 tasks in 4 phases)
Goal: a calculator that evaluates "a op b"

` + demoPlanTree + `
────────────────────────────────────────────────────────────
`

func TestPlanShowAndApprovalShowTheWholePlan(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	md, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-plan")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	// The exit-4 message points to the whole plan.
	if want := "  read it: gaffer --repo " + dir + " plan show r-plan\n"; !strings.Contains(out, want) {
		t.Errorf("run's output lacks %q:\n%s", want, out)
	}
	// plan show: the phases, then the plan as written, whole.
	want := demoPlanHead + strings.TrimRight(string(md), "\n") + "\n"
	for _, args := range [][]string{{"plan", "show", "r-plan"}, {"plan", "show"}, {"plan", "show", "r-plan", "--repo", dir}} {
		out, code = gaffer(t, append([]string{"--repo", dir}, args...)...)
		if code != ExitOK || out != want {
			t.Errorf("%v: exit %d, output\n%s\nwant\n%s", args, code, out, want)
		}
	}
	out, code = gaffer(t, "--repo", dir, "plan", "show", "r-plan", "--json")
	var pv runview.Plan
	if err := json.Unmarshal([]byte(out), &pv); code != ExitOK || err != nil {
		t.Fatalf("plan show --json: exit %d, %v\n%s", code, err, out)
	}
	if pv.Markdown != string(md) || len(pv.Tasks) != 6 || pv.Tasks[0].Description == "" || len(pv.Phases) != 4 || pv.Mode != "phased" {
		t.Errorf("plan show --json = %+v", pv)
	}
	// status: the plan in --json, a pointer to it in text.
	if v := statusJSON(t, "--repo", dir); v.Plan == nil || v.Plan.Markdown != string(md) || v.Plan.Tasks[2].Files[0] != "calc.go" {
		t.Errorf("status --json plan = %+v", v.Plan)
	}
	if out, _ = gaffer(t, "--repo", dir, "status"); !strings.Contains(out, "\nplan:    gaffer --repo "+dir+" plan show r-plan\n") {
		t.Errorf("status lacks the plan show line:\n%s", out)
	}
	// An unknown run is exit 8.
	if out, code = gaffer(t, "--repo", dir, "plan", "show", "r-nope"); code != ExitPrecondition {
		t.Errorf("plan show of an unknown run: exit %d\n%s", code, out)
	}
}

func TestTerminalApprovalShowsTheWholePlan(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	md, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	var buf syncBuffer
	ans := &answers{in: []string{"a\n"}, out: &buf}
	app := NewWithIO("test", IO{In: ans, Out: &buf, Err: &buf, Terminal: func() bool { return true }})
	inProcess.Lock() // see inProcess
	err = app.RunContext(context.Background(), []string{"gaffer", "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-plan"})
	inProcess.Unlock()
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	// What the user saw when answering: the whole plan (a buffer is no
	// terminal, so no pager), then where to read it again, then the question.
	seen := ans.seen[0]
	want := demoPlanHead + strings.TrimRight(string(md), "\n") + "\n\n(The plan again at any time: gaffer --repo " + dir +
		" plan show r-plan)\n\nApprove this plan? [a]pprove, [r]eject, [f]eedback (reject and replan): "
	if !strings.HasSuffix(seen, want) {
		t.Errorf("the prompt's screen ends\n%s\nwant it to end\n%s", seen[max(0, len(seen)-len(want)):], want)
	}
}

func TestPagerOnlyOnATerminal(t *testing.T) {
	const text = "line 1\nline 2\n"
	paged := filepath.Join(t.TempDir(), "paged")
	pager := "cat > " + paged
	// Not a terminal: plain text, no pager.
	var buf bytes.Buffer
	if err := pageTo(&buf, nil, pager, text); err != nil || buf.String() != text {
		t.Fatalf("off a terminal: %v, wrote %q", err, buf.String())
	}
	if _, err := os.Stat(paged); !os.IsNotExist(err) {
		t.Fatalf("the pager ran off a terminal: %v", err)
	}
	if (IO{Out: &buf}).ttyOut() != nil {
		t.Error("a buffer counted as a terminal")
	}
	tty := openPTY(t)
	if (IO{Out: tty}).ttyOut() != tty {
		t.Error("a pty did not count as a terminal")
	}
	// On a terminal: $PAGER gets the text, nothing is written around it.
	buf.Reset()
	if err := pageTo(&buf, tty, pager, text); err != nil || buf.Len() != 0 {
		t.Fatalf("on a terminal: %v, wrote %q", err, buf.String())
	}
	if got, _ := os.ReadFile(paged); string(got) != text {
		t.Errorf("the pager got %q", got)
	}
	// A pager that is not installed: the text is written as it is.
	if err := pageTo(&buf, tty, "gaffer-no-such-pager", text); err != nil || buf.String() != text {
		t.Errorf("missing pager: %v, wrote %q", err, buf.String())
	}
}

func TestRunListsEveryProblemBeforeWritingAnything(t *testing.T) {
	dir, plan, script := demoRepo(t)
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "script.yaml")
	line := strings.Count(string(src[:strings.Index(string(src), "          content: |")]), "\n") + 1
	// Two problems in the script: both are listed, not only the first.
	badSrc := strings.Replace(string(src), "          content: |", "          contnet: |", 1) + "evaluatr: []\n"
	last := strings.Count(badSrc, "\n")
	if err := os.WriteFile(bad, []byte(badSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	// A profile with a CLI developer whose program is not on PATH, and a
	// reviewer of the llm driver with no model.
	writeTestFile(t, filepath.Join(dir, "gaffer.yaml"), "default_profile: p\nprofiles:\n  p:\n    driver: script\n    roles:\n"+
		"      developer: {driver: cli, agent: claude}\n      reviewer: {driver: llm}\n    provider: {name: ollama}\n")
	gitOut(t, dir, "add", "gaffer.yaml")
	gitOut(t, dir, "commit", "-qm", "profile")
	t.Setenv("PATH", t.TempDir())
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", bad)
	want := "gaffer: the run cannot start, 4 problems:\n" +
		"  script " + bad + ": line " + itoa(line) + ": unknown key \"contnet\" in developer[0].actions[0].write (known keys: path, content, content_file)\n" +
		"  script " + bad + ": line " + itoa(last) + ": unknown key \"evaluatr\" at the top level (known keys: architect, developer, reviewer, evaluator, summarizer, doctor, replanner)\n" +
		"  profile p: the reviewer uses driver llm but names no model; set model in gaffer.yaml or pass --model\n" +
		"  the developer's CLI agent \"claude\" runs \"claude\", which is not on PATH (install it, or change agents.claude.command in gaffer.yaml)\n"
	if code != ExitInvalid || out != want {
		t.Errorf("exit %d, output\n%s\nwant exit 3 and\n%s", code, out, want)
	}
	noStore(t, dir)
	// Both input files missing: both named.
	m1, m2 := filepath.Join(t.TempDir(), "p.md"), filepath.Join(t.TempDir(), "s.yaml")
	out, code = gaffer(t, "--repo", dir, "run", "--plan", m1, "--script", m2, "--driver", "script")
	want = "gaffer: the run cannot start, 2 problems:\n  --plan " + m1 + ": no such file\n  --script " + m2 + ": no such file\n"
	if code != ExitUsage || out != want {
		t.Errorf("missing files: exit %d, output\n%s\nwant\n%s", code, out, want)
	}
	noStore(t, dir)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestUnknownFlagAfterRunIsAUsageError(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-flags"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	// Each points to its own command's help.
	const want = "gaffer: flag provided but not defined: -dry-run\nRun 'gaffer %s --help' for usage.\n"
	// Before RUN urfave/cli refuses it; after RUN it must too, and nothing happens.
	for _, args := range [][]string{
		{"fork", "--dry-run", "r-flags", "--from", "1"},
		{"fork", "r-flags", "--from", "1", "--dry-run"},
		{"approve", "r-flags", "--dry-run"},
		{"reject", "r-flags", "--dry-run=x"},
		{"status", "r-flags", "--dry-run"},
		{"history", "r-flags", "--dry-run"},
		{"cancel", "r-flags", "--dry-run"},
		{"resume", "r-flags", "--dry-run"},
		{"plan", "show", "r-flags", "--dry-run"},
		{"diff", "r-flags", "--dry-run"},
		{"logs", "r-flags", "--dry-run"},
		{"delete", "r-flags", "--dry-run"},
	} {
		cmd := args[0]
		if cmd == "plan" {
			cmd = "plan show"
		}
		want := fmt.Sprintf(want, cmd)
		out, code := gaffer(t, append([]string{"--repo", dir}, args...)...)
		if code != ExitUsage || out != want {
			t.Errorf("%v: exit %d, output %q; want exit 2 and %q", args, code, out, want)
		}
	}
	out, code := gaffer(t, "--repo", dir, "list", "--json")
	if code != ExitOK || strings.Count(out, `"run_id"`) != 1 || !strings.Contains(out, `"status": "awaiting_approval"`) {
		t.Errorf("a refused command changed the store: exit %d\n%s", code, out)
	}
	// Known flags after RUN still work, with or without "=".
	if out, code := gaffer(t, "--repo", dir, "status", "r-flags", "--json=true"); code != ExitOK || !strings.HasPrefix(out, "{") {
		t.Errorf("status RUN --json=true: exit %d\n%s", code, out)
	}
}

// gafferIn runs the gaffer binary in dir with no terminal and returns its
// output (stdout and stderr) and exit code.
func gafferIn(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PAGER=", "GAFFER_REPO=", "GAFFER_STORE=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestCommandsWorkFromASubdirectory(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	sub := filepath.Join(dir, "internal", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := gafferIn(t, bin, sub, "run", "--plan", plan, "--script", script, "--run-id", "r-sub")
	if code != ExitAwaitingApproval || !strings.Contains(out, "\n  approve: gaffer approve r-sub\n") {
		t.Fatalf("run from a subdirectory: exit %d, want 4 and the approve command without --repo:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); err != nil {
		t.Fatalf("no store at the top: %v", err)
	}
	for _, d := range []string{sub, filepath.Dir(sub)} {
		if entries, _ := os.ReadDir(d); len(entries) > 1 {
			t.Errorf("%s got files: %v", d, entries)
		}
	}
	for _, args := range [][]string{{"status"}, {"list"}, {"history"}, {"plan", "show"}} {
		if out, code := gafferIn(t, bin, sub, args...); code != ExitOK || !strings.Contains(out, "r-sub") && !strings.Contains(out, "awaiting_approval") {
			t.Errorf("%v from a subdirectory: exit %d\n%s", args, code, out)
		}
	}
	// --repo given as a subdirectory finds the top too.
	if out, code := gafferIn(t, bin, t.TempDir(), "--repo", sub, "status"); code != ExitOK || !strings.Contains(out, "r-sub") {
		t.Errorf("--repo SUBDIR: exit %d\n%s", code, out)
	}
	if out, code := gafferIn(t, bin, sub, "approve"); code != ExitOK || !strings.Contains(out, "Run r-sub completed") {
		t.Errorf("approve from a subdirectory: exit %d\n%s", code, out)
	}
	// Outside any repository: still exit 8.
	if out, code := gafferIn(t, bin, t.TempDir(), "run", "--plan", plan, "--script", script); code != ExitPrecondition {
		t.Errorf("outside a repository: exit %d\n%s", code, out)
	}
}

func TestExitCodesMatchTheReadme(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	// Usage: an unknown --driver, the script driver without --script.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--plan", plan, "--driver", "magic"}, "gaffer: --driver \"magic\": want script, llm or cli\nRun 'gaffer run --help' for usage.\n"},
		{[]string{"run", "--plan", plan, "--driver", "script"}, "gaffer: the script driver (architect, developer, reviewer, evaluator) needs --script FILE (its format: gaffer help script-format)\nRun 'gaffer run --help' for usage.\n"},
	} {
		if out, code := gaffer(t, append([]string{"--repo", dir}, c.args...)...); code != ExitUsage || out != c.want {
			t.Errorf("%v: exit %d, output %q; want exit 2 and %q", c.args, code, out, c.want)
		}
	}
	// Configuration: a profile incomplete for a role.
	writeTestFile(t, filepath.Join(dir, "gaffer.yaml"), "default_profile: p\nprofiles:\n  p:\n    driver: cli\n")
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--allow-dirty")
	if code != ExitInvalid || !strings.Contains(out, "gaffer.yaml:3: the architect uses driver cli but no agent is named") {
		t.Errorf("incomplete profile: exit %d, want 3\n%s", code, out)
	}
	if err := os.Remove(filepath.Join(dir, "gaffer.yaml")); err != nil {
		t.Fatal(err)
	}
	noStore(t, dir)

	// A run stopped on an error it can resume from: its own code, 9, and
	// status says running (stopped), not halted.
	moved := script + ".away"
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-stop"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if err := os.Rename(script, moved); err != nil {
		t.Fatal(err)
	}
	out, code = gaffer(t, "--repo", dir, "approve")
	if code != ExitStopped || !strings.Contains(out, "run r-stop stopped: ") || !strings.Contains(out, "(fix the cause, then: gaffer --repo "+dir+" resume r-stop)") {
		t.Fatalf("approve with the script gone: exit %d, want %d\n%s", code, ExitStopped, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "running" || !v.Stopped {
		t.Errorf("status after exit 9: %s, stopped %v", v.Status, v.Stopped)
	}
	if err := os.Rename(moved, script); err != nil {
		t.Fatal(err)
	}
	if out, code := gaffer(t, "--repo", dir, "resume"); code != ExitOK {
		t.Errorf("resume after exit 9: exit %d\n%s", code, out)
	}
}

func TestStatusListHistoryReadWell(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gafferIn(t, bin, dir, "run", "--plan", plan, "--script", script, "--run-id", "r-read"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, _ := gafferIn(t, bin, dir, "status")
	if !strings.Contains(out, "\ncheckpoint: 3\nnext:      plan approval\n") {
		t.Errorf("status, want next in the user's words:\n%s", out)
	}
	v := statusJSON(t, "--repo", dir)
	for _, tz := range []struct{ env, label string }{{"Asia/Tokyo", "JST"}, {"UTC", "UTC"}, {"America/St_Johns", ""}} {
		loc, err := time.LoadLocation(tz.env)
		if err != nil {
			t.Skipf("no zone data: %v", err)
		}
		label := tz.label
		if label == "" {
			label, _ = time.Now().In(loc).Zone() // NST or NDT
		}
		cmd := func(args ...string) string {
			c := exec.Command(bin, args...)
			c.Dir, c.Env = dir, append(os.Environ(), "TZ="+tz.env)
			b, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, b)
			}
			return string(b)
		}
		list := strings.Split(cmd("list"), "\n")
		if !strings.Contains(list[0], "CREATED ("+label+")") || !strings.Contains(list[1], v.CreatedAt.In(loc).Format(time.DateTime)) {
			t.Errorf("TZ=%s: list, want times in %s, labelled:\n%s", tz.env, label, strings.Join(list, "\n"))
		}
		hist := strings.Split(cmd("history"), "\n")
		if !strings.HasSuffix(strings.TrimSpace(hist[0]), "TIME ("+label+")") {
			t.Errorf("TZ=%s: history header %q", tz.env, hist[0])
		}
	}
}

func TestStatusWatchLeftWithCtrlCExitsZeroQuietly(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gafferIn(t, bin, dir, "run", "--plan", plan, "--script", script, "--run-id", "r-watch"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	cmd := exec.Command(bin, "status", "--watch", "--interval", "10ms")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 64)
	if _, err := io.ReadAtLeast(stdout, first, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // many intervals: the watch keeps looking
	if cmd.ProcessState != nil {
		t.Fatal("the watch ended by itself")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("the watch ended by itself: %v; stderr %s", err, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); err != nil || code != 0 || stderr.Len() != 0 {
		t.Errorf("watch left with Ctrl-C: %v, exit %d, stderr %q; want 0 and nothing", err, code, stderr.String())
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "awaiting_approval" {
		t.Errorf("the run after the watch: %s", v.Status)
	}
}

func TestLogsSayWhatWasAskedAndNoPlans(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	// Not asked: no log line beside the progress view.
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-log1")
	if code != ExitAwaitingApproval || strings.Contains(out, "level=") {
		t.Errorf("run without --log-level: exit %d, log lines in\n%s", code, out)
	}
	// --log-level info: info lines; waiting for approval is no ERROR and
	// the log carries no plan.
	out, code = gaffer(t, "--repo", dir, "--log-level", "info", "reject", "r-log1", "--feedback", "again")
	if code != ExitAwaitingApproval {
		t.Fatalf("reject: exit %d\n%s", code, out)
	}
	var logs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "level=") {
			logs = append(logs, l)
		}
	}
	joined := strings.Join(logs, "\n")
	if !strings.Contains(joined, `level=INFO msg="waiting for approval" run=r-log1 node=approval`) ||
		strings.Contains(joined, "level=ERROR") || strings.Contains(joined, "Table tests") || strings.Contains(joined, "interrupt 0") {
		t.Errorf("--log-level info, want an INFO line for the approval, no ERROR, no plan:\n%s", joined)
	}
	// The demo's output has no raw log line.
	out, code = gaffer(t, "demo", "--dir", filepath.Join(t.TempDir(), "demo"), "--no-go-test")
	if code != ExitOK || strings.Contains(out, "level=") || strings.Contains(out, "msg=") {
		t.Errorf("demo: exit %d, a log line in its output:\n%s", code, out)
	}
}

func TestDumbTerminalAndNoColorGetPlainLines(t *testing.T) {
	t.Parallel()
	for _, env := range [][2]string{{"TERM", "dumb"}, {"NO_COLOR", "1"}} {
		t.Run(env[0], func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{"TERM": "xterm", "NO_COLOR": ""} // a terminal that could draw, but for env
			vars[env[0]] = env[1]
			dir, plan, script := demoRepo(t)
			var buf syncBuffer
			app := NewWithIO("test", IO{In: strings.NewReader(""), Out: &buf, Err: &buf, Terminal: func() bool { return true }, Getenv: envWith(vars)})
			inProcess.Lock()
			err := app.RunContext(context.Background(), []string{"gaffer", "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"})
			inProcess.Unlock()
			out := buf.String()
			if err != nil || strings.Contains(out, "\x1b") {
				t.Fatalf("%s=%s: %v, escape sequences in\n%q", env[0], env[1], err, out)
			}
			if !strings.Contains(out, "Phase 4 (impl): ✓ Completed") {
				t.Errorf("no final tree:\n%s", out)
			}
		})
	}
}

func TestWatchFitsAShortTerminal(t *testing.T) {
	t.Parallel()
	var md strings.Builder
	md.WriteString("# Plan: many tasks\n\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&md, "### Task %d: step %d\n\nDo step %d.\n\n", i, i, i)
	}
	dir, _, script := demoRepo(t)
	plan := writePlan(t, md.String())
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-tall"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	var buf syncBuffer
	app := NewWithIO("test", IO{In: strings.NewReader(""), Out: &buf, Err: &buf, Terminal: func() bool { return true }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	inProcess.Lock() // see inProcess; the app's goroutine unlocks it
	go func() {
		defer inProcess.Unlock()
		done <- app.RunContext(ctx, []string{"gaffer", "--repo", dir, "status", "r-tall", "--watch", "--interval", "10ms"})
	}()
	for !strings.Contains(buf.String(), "Phase 30") {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// The picture is drawn in place (home, erase below), never by clearing
	// the screen, and fits the 24-line window the size reads for a non-file.
	if strings.Contains(out, "\x1b[2J") || !strings.HasPrefix(out, "\x1b[H\x1b[J") {
		t.Errorf("want home and erase-below, not clear-screen:\n%q", out[:min(len(out), 200)])
	}
	frame := strings.TrimPrefix(out, "\x1b[H\x1b[J")
	// Left, the watch ends with one line below the picture: the 24th.
	frame, left, _ := strings.Cut(frame, "\r\x1b[K")
	if !strings.HasPrefix(left, "Stopped watching: run r-tall is awaiting_approval") || strings.Count(left, "\n") != 1 {
		t.Errorf("want the picture, then one line saying where the watch left the run:\n%q", left)
	}
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	if len(lines) != 23 || !strings.HasPrefix(lines[0], "… ") || !strings.Contains(lines[22], "Phase 30") && !strings.Contains(lines[22], "step 30") {
		t.Errorf("want 23 lines ending with the last phase, got %d:\n%s", len(lines), frame)
	}
}

// While `gaffer run` holds the store and waits at its prompt, `plan show`
// in another terminal reads the plan through it.
func TestPlanShowWhileTheRunAsks(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	out, done := runAtPrompt(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-held")
	got, code := gafferCmd(t, bin, "--repo", dir, "plan", "show", "r-held")
	if code != ExitOK || !strings.HasPrefix(got, "Plan of run r-held (revision 0, phased mode, 6 tasks in 4 phases)\n") || !strings.Contains(got, "Table tests for Add and Sub") {
		t.Errorf("plan show while the run holds the store: exit %d\n%s", code, got)
	}
	// diff is answered by the holder too (here: nothing committed yet).
	if got, code := gafferCmd(t, bin, "--repo", dir, "diff", "r-held"); code != ExitPrecondition || got != "gaffer: run r-held has committed no phase yet (awaiting_approval)\n" {
		t.Errorf("diff while the run holds the store: exit %d\n%s", code, got)
	}
	// A second run is refused, and told how to run several at once.
	got, code = gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-second")
	if code != ExitLocked || strings.Count(got, "\n") != 1 || !strings.Contains(got, "gaffer run (pid ") ||
		!strings.Contains(got, "serve` and queue each run with `gaffer submit`") {
		t.Errorf("a second run while the first holds the store: exit %d\n%s", code, got)
	}
	if got, code := gafferCmd(t, bin, "--repo", dir, "approve", "r-held"); code != ExitOK {
		t.Fatalf("approve: exit %d\n%s", code, got)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-comp"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{""}, "run\napprove\nreject\nresume\nstatus\nlist\nhistory\nfork\ndiff\nlogs\ncancel\nmerge\ndelete\nprune\ndemo\ngraph\nplan\nstory\nconfig\nmcp\ncompletion\nserve\nsubmit\nhelp\n"},
		{[]string{"st"}, "status\nstory\n"},
		{[]string{"--repo", dir, "status", "--j"}, "--json\n"},
		{[]string{"fork", "--"}, "--from\n--remote\n--repo\n--store\n--profile\n--log-level\n--log-format\n"},
		{[]string{"plan", ""}, "validate\nshow\n"},
		{[]string{"--repo", dir, "approve", ""}, "r-comp\n"},
		{[]string{"--repo", dir, "plan", "show", "r-"}, "r-comp\n"},
		{[]string{"--repo", dir, "diff", ""}, "r-comp\n"},
		{[]string{"--repo", dir, "logs", "r-c"}, "r-comp\n"},
		{[]string{"--repo", dir, "status", "r-comp", ""}, ""},
		{[]string{"run", "--plan", ""}, ""},
		{[]string{"completion", ""}, "bash\nfish\nzsh\n"},
	} {
		out, errs, code := run(t, append([]string{"__complete"}, c.words...)...)
		if code != ExitOK || errs != "" || out != c.want {
			t.Errorf("complete %q: exit %d, %q, want %q", c.words, code, out, c.want)
		}
	}
	if out, _, code := run(t, "--help"); code != ExitOK || strings.Contains(out, "__complete") || !strings.Contains(out, "completion") {
		t.Errorf("help shows __complete or misses completion:\n%s", out)
	}
	if _, errs, code := run(t, "completion", "tcsh"); code != ExitUsage || !strings.Contains(errs, `unknown shell "tcsh"`) {
		t.Errorf("completion tcsh: exit %d, %s", code, errs)
	}
	// The bash script, in bash, with gaffer on PATH.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := gafferBinary(t)
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "gaffer")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{"gaffer --repo " + dir + " appr", "approve"},
		{"gaffer --repo " + dir + " approve ''", "r-comp"},
		{"gaffer plan sh", "show"},
	} {
		cmd := exec.Command(bash, "--norc", "-c", `source <(gaffer completion bash); COMP_WORDS=(`+c.line+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _gaffer; printf '%s\n' "${COMPREPLY[@]}"`)
		cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		got, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != c.want {
			t.Errorf("bash completes %q: %v, %q; want %q", c.line, err, got, c.want)
		}
	}
}

// TestPlanFromAPipeIsReadOnce gives the plan on a pipe (--plan /dev/stdin,
// as --plan <(…) does): run checks it and then stores it, and a pipe can be
// read only once, so the stored plan and the goal must come from that one
// read.
func TestPlanFromAPipeIsReadOnce(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	src, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--repo", dir, "run", "--plan", "/dev/stdin", "--script", script, "--run-id", "r-pipe")
	cmd.Stdin = strings.NewReader(string(src))
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	v, _ := statusOf(t, bin, dir, "r-pipe")
	if v.Goal != `a calculator that evaluates "a op b"` {
		t.Errorf("goal %q, want the plan's title", v.Goal)
	}
	got, code := gafferCmd(t, bin, "--repo", dir, "plan", "show", "r-pipe")
	if code != ExitOK || !strings.Contains(got, "Table tests for Add and Sub") {
		t.Errorf("plan show: exit %d\n%s", code, got)
	}
}
