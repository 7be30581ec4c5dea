package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// run runs the application in-process as main would and returns stdout,
// what Report wrote to stderr and the exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	inProcess.Lock() // see inProcess
	defer inProcess.Unlock()
	err := New("v1.2.3", &out, &errb).RunContext(context.Background(), append([]string{"gaffer"}, args...))
	Report(&errb, err)
	return out.String(), errb.String(), ExitCode(err)
}

const demoPlan = "../examples/demo/plan.md"

// demoPlanTree is the demo plan's phases, lanes and tasks, as plan
// validate and plan show draw them.
const demoPlanTree = `Phase 1 (2 lanes): 1a | 1b
├── 1a [test] Write tests for Add and Sub (calc_test.go)
└── 1b [test] Write tests for Parse (parse_test.go)
Phase 2 (2 lanes): 2a | 2b
├── 2a [impl] Implement Add and Sub (calc.go)
└── 2b [impl] Implement Parse (parse.go)
Phase 3 (1 lane): 3
└── 3 [test] Write tests for Eval (eval_test.go)
Phase 4 (1 lane): 4
└── 4 [impl] Implement Eval (eval.go)
`

func TestPlanValidateTree(t *testing.T) {
	out, errs, code := run(t, "plan", "validate", demoPlan)
	want := demoPlan + ": 6 tasks in 4 phases (phased mode)\n" + demoPlanTree
	if out != want || errs != "" || code != ExitOK {
		t.Errorf("got code %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, out, want)
	}
}

func TestPlanValidateTaskMode(t *testing.T) {
	out, _, code := run(t, "plan", "validate", "../state/testdata/plans/task-mode.md")
	if code != ExitOK || !strings.Contains(out, "4 tasks in 4 phases (task mode)\nPhase 1 (1 lane): 1\n└── 1 Reproduce the race\nPhase 2 (1 lane): 2\n") {
		t.Errorf("code %d, output\n%s", code, out)
	}
}

func TestPlanValidateJSON(t *testing.T) {
	for _, args := range [][]string{{"plan", "validate", "--json", demoPlan}, {"plan", "validate", demoPlan, "--json"}} {
		out, _, code := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: code %d", args, code)
		}
		var got planJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if want := [][]string{{"1a", "1b"}, {"2a", "2b"}, {"3"}, {"4"}}; !reflect.DeepEqual(got.Phases, want) {
			t.Errorf("phases = %v", got.Phases)
		}
		if want := [][][]string{{{"1a"}, {"1b"}}, {{"2a"}, {"2b"}}, {{"3"}}, {{"4"}}}; !reflect.DeepEqual(got.Lanes, want) {
			t.Errorf("lanes = %v", got.Lanes)
		}
		if !got.Valid || got.Mode != "phased" || len(got.Tasks) != 6 || len(got.Problems) != 0 {
			t.Errorf("json = %+v", got)
		}
		if tk := got.Tasks[5]; !reflect.DeepEqual(tk, taskJSON{ID: "4", Title: "Implement Eval", Type: "impl", DependsOn: []string{"3"}, Files: []string{"eval.go"}, Line: 42}) {
			t.Errorf("task 4 = %+v", tk)
		}
	}
}

func writePlan(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.md")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanValidateInvalid(t *testing.T) {
	p := writePlan(t, "# x\n\n### Task 1: impl\n- type: impl\n- depends on: 2\n\n### Task 1: dup\n- type: test\n")
	out, errs, code := run(t, "plan", "validate", p)
	want := fmt.Sprintf("%[1]s:3: task 1 is an impl task with no test task in its dependency chain (write the tests first, or turn the TDD check off)\n"+
		"%[1]s:5: task 1 depends on unknown task 2\n%[1]s:7: duplicate task id 1 (first used on line 3)\n", p)
	if code != ExitInvalid || out != "" || errs != want {
		t.Errorf("code %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errs, want)
	}
	// With --json, the problems are in the JSON too.
	out, _, code = run(t, "plan", "validate", "--json", p)
	var got planJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitInvalid || got.Valid || len(got.Problems) != 3 || got.Problems[1].Line != 5 {
		t.Errorf("json: code %d, err %v, %+v", code, err, got)
	}
}

func TestPlanValidateNoTDD(t *testing.T) {
	p := writePlan(t, "### Task 1: impl\n- type: impl\n- depends on: none\n")
	if _, _, code := run(t, "plan", "validate", p); code != ExitInvalid {
		t.Errorf("TDD check on: code %d", code)
	}
	if _, errs, code := run(t, "plan", "validate", "--no-tdd", p); code != ExitOK {
		t.Errorf("--no-tdd: code %d, %s", code, errs)
	}
}

func TestUsageAndFileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "plan.md")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plan", "validate", missing}, ExitUsage, "gaffer: open " + missing + ": no such file or directory\n"},
		{[]string{"plan", "validate"}, ExitUsage, "gaffer: plan validate: missing FILE\nRun 'gaffer plan validate --help' for usage.\n"},
		{[]string{"plan", "validate", "a.md", "b.md"}, ExitUsage, "want one FILE"},
		{[]string{"plan", "validate", "--bogus", "a.md"}, ExitUsage, "flag provided but not defined: -bogus"},
		{[]string{"plan", "validate", "a.md", "--bogus"}, ExitUsage, `unknown flag "--bogus"`},
		{[]string{"plan", "frob"}, ExitUsage, `unknown command "plan frob"`},
		{[]string{"frob"}, ExitUsage, `unknown command "frob"`},
		{[]string{"--log-level", "loud", "plan", "validate", demoPlan}, ExitUsage, `--log-level "loud"`},
		{[]string{"--log-format", "xml", "plan", "validate", demoPlan}, ExitUsage, `--log-format "xml"`},
		{[]string{"serve", "--max-sessions", "0"}, ExitUsage, "--max-sessions 0: want at least 1"},
	} {
		out, errs, code := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) || strings.Count(errs, "gaffer:") != 1 {
			t.Errorf("%v: code %d, stderr %q, stdout %q; want code %d and %q", c.args, code, errs, out, c.code, c.msg)
		}
	}
}

func TestGlobalsFromEnvironment(t *testing.T) {
	repo := t.TempDir()
	t.Setenv("GAFFER_REPO", repo)
	t.Setenv("GAFFER_LOG_FORMAT", "json")
	t.Setenv("GAFFER_PROFILE", "fast")
	var got Globals
	app := New("dev", &bytes.Buffer{}, &bytes.Buffer{})
	app.Commands = nil
	app.Action = func(c *ucli.Context) error {
		var err error
		got, err = GlobalsFrom(c)
		return err
	}
	if err := app.Run([]string{"gaffer", "--log-level", "debug"}); err != nil {
		t.Fatal(err)
	}
	want := Globals{Repo: repo, Store: filepath.Join(repo, ".git", "gaffer"), Profile: "fast", LogLevel: "debug", LogFormat: "json"}
	if got != want {
		t.Errorf("globals = %+v, want %+v", got, want)
	}
	// The flag wins over the environment.
	if err := app.Run([]string{"gaffer", "--log-format", "text", "--store", "/s"}); err != nil || got.LogFormat != "text" || got.Store != "/s" {
		t.Errorf("flags over env: %+v, %v", got, err)
	}
	var buf bytes.Buffer
	got.LogFormat, got.LogLevel = "json", "debug"
	got.Logger(&buf).Debug("hello")
	if !strings.Contains(buf.String(), `"msg":"hello"`) {
		t.Errorf("json debug log = %q", buf.String())
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitFailure},
		{fmt.Errorf("run: %w", &ExitError{Code: ExitAwaitingApproval, Err: errors.New("waiting")}), ExitAwaitingApproval},
		{fmt.Errorf("x: %w", state.ErrInvalidConfig), ExitInvalid},
		{&state.PlanError{File: "p", Problems: []state.Problem{{Msg: "m"}}}, ExitInvalid},
		{fmt.Errorf("resume: %w", &checkpoint.LeaseHeldError{RunID: "r"}), ExitLocked},
		{fmt.Errorf("open: %w", workspace.ErrNotRepo), ExitPrecondition},
		{usageErrorf("bad"), ExitUsage},
	} {
		if got := ExitCode(c.err); got != c.code {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
	for s, code := range map[state.RunStatus]int{
		state.RunCompleted: 0, state.RunAwaitingApproval: 4, state.RunHalted: 5, state.RunFailed: 5,
		state.RunCancelled: 5, state.RunRejected: 6, state.RunRunning: 1,
	} {
		if got := StatusExitCode(s); got != code {
			t.Errorf("StatusExitCode(%v) = %d, want %d", s, got, code)
		}
	}
}

func TestReport(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&ExitError{Code: ExitAwaitingApproval}, ""},
		{errors.New("boom"), "gaffer: boom\n"},
		{fmt.Errorf("run: %w", &ExitError{Code: ExitHalted, Err: errors.New("phase 2 halted")}), "gaffer: run: phase 2 halted\n"},
		{usageErrorf("no"), "gaffer: no\nRun 'gaffer --help' for usage.\n"},
		{&state.PlanError{File: "p.md", Problems: []state.Problem{{Line: 3, Msg: "a"}, {Msg: "b"}}}, "p.md:3: a\np.md: b\n"},
	} {
		var buf bytes.Buffer
		Report(&buf, c.err)
		if buf.String() != c.want {
			t.Errorf("Report(%v) = %q, want %q", c.err, buf.String(), c.want)
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{}, {"--help"}, {"plan"}, {"help", "plan"}, {"plan", "validate", "--help"}} {
		out, errs, code := run(t, args...)
		if code != ExitOK || errs != "" || !strings.Contains(out, "USAGE:") {
			t.Errorf("%v: code %d, stderr %q, stdout %q", args, code, errs, out)
		}
	}
}
