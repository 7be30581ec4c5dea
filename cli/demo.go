package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/gitcmd"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// DemoOptions are the flags of `gaffer demo`.
type DemoOptions struct {
	Dir         string        // the demo repository; "" for a new temporary directory
	Pace        time.Duration // pause before each agent action
	AutoApprove bool          // skip the (self-answered) approval pause
	RunID       string        // fixed run id (tests)
	SkipGoTest  bool          // do not run `go test ./...` at the end (tests)
}

func demoCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "demo",
		Usage:        "run the whole workflow offline on a small Go project, with the script driver",
		OnUsageError: onUsageError,
		Flags: localGlobals(
			&ucli.StringFlag{Name: "dir", EnvVars: []string{"GAFFER_DIR"}, Usage: "where to create the demo repository (default: a new temporary directory)"},
			&ucli.DurationFlag{Name: "pace", EnvVars: []string{"GAFFER_PACE"}, Usage: "pause before each agent action, to follow (and kill) the run"},
			&ucli.BoolFlag{Name: "auto-approve", EnvVars: []string{"GAFFER_AUTO_APPROVE"}, Usage: "do not pause for the approval"},
			&ucli.StringFlag{Name: "run-id", Hidden: true},
			&ucli.BoolFlag{Name: "no-go-test", Hidden: true},
		),
		Action: func(c *ucli.Context) error {
			return Demo(c.Context, c, io, DemoOptions{Dir: c.String("dir"), Pace: c.Duration("pace"),
				AutoApprove: c.Bool("auto-approve"), RunID: c.String("run-id"), SkipGoTest: c.Bool("no-go-test")})
		},
	}
}

// demoFiles is the demo project before the run: a Go module with only doc.go.
func demoFiles() map[string]string {
	return map[string]string{
		"go.mod":     "module example.com/calc\n\ngo 1.21\n",
		"doc.go":     "// Package calc evaluates expressions of the form \"a op b\".\npackage calc\n",
		".gitignore": "*.test\n",
		"README.md":  "# calc\n\nA tiny calculator, built phase by phase by gaffer's demo.\n",
	}
}

// demoEpoch is the demo repository's first commit time: fixed, so every
// demo run makes the same commits.
func demoEpoch() time.Time { return time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC) }

// Demo creates the demo repository, runs the plan with the script driver
// (answering the approval itself, visibly), and shows the result.
func Demo(ctx context.Context, c *ucli.Context, io IO, o DemoOptions) error {
	dir, err := SetupDemo(ctx, o.Dir)
	if err != nil {
		return err
	}
	out := io.Out
	fmt.Fprintf(out, "Demo repository: %s\n", dir)
	if err := c.Set("repo", dir); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	setup := newSetup(c, io)
	program, onPath := demoProgram(io.Program, exec.LookPath, os.Executable)
	l, err := openHost(c, io, hostOptions{kind: commandKind(c), setup: setup, program: program})
	if err != nil {
		return err
	}
	defer l.Close()
	gd := gitDir(dir)
	run, err := setup.Preflight(dir, host.RunSpec{
		PlanFile: "", Goal: profile.PlanTitle(demo.Plan, "plan.md"), Driver: "script",
		Script: filepath.Join(gd, "gaffer-demo", "script.yaml"), AutoApprove: o.AutoApprove, Pace: o.Pace, RunID: o.RunID,
	})
	if err != nil {
		return err
	}
	id := run.Spec().RunID
	fmt.Fprintf(out, "Run %s: the architect plans, you approve, each phase runs in a fresh session, is reviewed and committed.\n", id)
	fmt.Fprintf(out, "It works on its own branch, %s, in its own work tree: your checkout stays as it is.\n", host.RunBranch(id))
	fmt.Fprintf(out, "(kill it at any moment and finish it with: %s)\n\n", l.cmd("resume"))
	l.front.ask = func(_ context.Context, req nodes.ApprovalRequest, s state.ExecutionState) (nodes.Answer, error) {
		fmt.Fprintf(out, "\nThe architect's plan (%s mode, %d phases):\n\n", req.Mode, req.Phases)
		writeRunTree(out, s, time.Now())
		fmt.Fprintf(out, "\nThe demo answers the approval itself: approving… (a real run waits for `%s`)\n\n", l.cmd("approve"))
		return nodes.Answer{Approved: true, Feedback: "approved by the demo"}, nil
	}
	res, err := l.Launch(ctx, run)
	if err := report(io, l.cmd, res, err); err != nil {
		return err
	}
	if err := demoEpilogue(ctx, l, dir, id, o.SkipGoTest); err != nil {
		return err
	}
	if !onPath {
		fmt.Fprintf(out, "\n%s\n", notOnPathLine(program, os.Executable))
	}
	return nil
}

// demoProgram is how the commands the demo suggests name gaffer, so that
// they work when typed: gaffer when that is this program on PATH (or the
// program is not known: arg0 ""), and onPath true; else the program as
// it was started (./bin/gaffer), or its absolute path when it was found
// some other way.
func demoProgram(arg0 string, lookPath func(string) (string, error), executable func() (string, error)) (name string, onPath bool) {
	self, err := executable()
	if arg0 == "" || err != nil {
		return "gaffer", true
	}
	if p, err := lookPath("gaffer"); err == nil && sameFile(p, self) {
		return "gaffer", true
	}
	if strings.Contains(arg0, "/") {
		return quote(arg0), false
	}
	return quote(self), false
}

// sameFile reports whether paths a and b are the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// notOnPathLine says why the demo's commands name program, and how to
// put gaffer on PATH: make install in the source tree it was built in
// (BIN/gaffer beside a Makefile and cmd/gaffer), go install otherwise.
func notOnPathLine(program string, executable func() (string, error)) string {
	how := "go install github.com/gaffer-dev/gaffer/cmd/gaffer@latest puts it there"
	if self, err := executable(); err == nil {
		tree := filepath.Dir(filepath.Dir(self))
		if _, err := os.Stat(filepath.Join(tree, "cmd", "gaffer", "main.go")); err == nil {
			if _, err := os.Stat(filepath.Join(tree, "Makefile")); err == nil {
				how = "make install, in " + tree + ", puts it in $(go env GOPATH)/bin"
			}
		}
	}
	return fmt.Sprintf("gaffer is not on your PATH, so these commands name %s; %s.", program, how)
}

// demoEpilogue shows the default flow's result: the user's branch as it
// was, the run's commits on its own branch, the execution directory there,
// go test on that branch (in a temporary work tree), and the command that
// takes the work into the user's branch.
func demoEpilogue(ctx context.Context, l *local, dir, id string, skipTest bool) error {
	out := l.io.Out
	snap, err := l.State(ctx, host.RunRequest{RunID: id})
	if err != nil {
		return err
	}
	writeDemoRecovery(out, snap.State)
	branch := host.RunBranch(id)
	if snap.State.Run.WorkTree == "" { // a run in place: its commits are on the user's branch
		branch = "HEAD"
	}
	fmt.Fprintf(out, "\n$ git log --oneline %s\n", branch)
	if err := runShown(gitcmd.Command(ctx, dir, nil, "log", "--oneline", branch), out); err != nil {
		return fmt.Errorf("demo: git log %s: %w", branch, err)
	}
	fmt.Fprintf(out, "\nExecution directory (committed on %s): %s\n", branch, snap.State.Run.ExecDir)
	if !skipTest {
		if err := demoGoTest(ctx, out, dir, branch); err != nil {
			return err
		}
	}
	if branch == "HEAD" {
		return nil
	}
	cur, _ := l.Repo().Branch(ctx)
	fmt.Fprintf(out, "\nYour branch %s is as it was: the run worked on %s, in its own work tree.\n", cmp.Or(cur, "HEAD"), branch)
	fmt.Fprintf(out, "Take its work into %s with:\n\n  %s\n", cmp.Or(cur, "HEAD"), l.cmd("merge", id))
	return nil
}

// demoGoTest runs go test on branch, in a temporary work tree when it is
// not the checkout's own.
func demoGoTest(ctx context.Context, out io.Writer, dir, branch string) error {
	at := dir
	if branch != "HEAD" {
		tmp, err := tmpdir.Make("demotest")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer tmp.Remove()
		at = filepath.Join(tmp.Path, "calc")
		if err := gitcmd.Command(ctx, dir, nil, "worktree", "add", "--quiet", "--detach", at, branch).Run(); err != nil {
			return fmt.Errorf("demo: git worktree add %s: %w", branch, err)
		}
		defer func() {
			_ = gitcmd.Command(context.WithoutCancel(ctx), dir, nil, "worktree", "remove", "--force", at).Run()
		}()
		fmt.Fprintf(out, "\n$ go test ./...   # on %s, in a temporary work tree\n", branch)
	} else {
		fmt.Fprintf(out, "\n$ go test ./...\n")
	}
	goTest := exec.CommandContext(ctx, "go", "test", "-count=1", "./...")
	goTest.Dir = at
	if err := runShown(goTest, out); err != nil {
		return exitf(ExitHalted, "demo: go test failed on %s in %s: %w", branch, dir, err)
	}
	return nil
}

func runShown(cmd *exec.Cmd, out interface{ Write([]byte) (int, error) }) error {
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// SetupDemo creates the demo repository in dir (a new temporary directory
// when dir is ""): the files, one commit at a fixed time, and the script
// and plan under .git/gaffer-demo (outside the work tree). A dir that
// already holds the demo repository is reused as it is.
func SetupDemo(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "gaffer-demo-")
		if err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	if _, err := os.Stat(filepath.Join(abs, ".git", "gaffer-demo", "script.yaml")); err == nil {
		return "", exitf(ExitPrecondition, "%s already holds a demo repository; continue its run with `gaffer resume --repo %s` or use another --dir", abs, abs)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", exitf(ExitPrecondition, "demo: %s is not empty; give an empty or new --dir", abs)
	}
	repo, err := workspace.Init(abs, "main")
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	for name, content := range demoFiles() {
		if err := workspace.WriteFileAtomic(filepath.Join(abs, name), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
	}
	author := workspace.Signature{Name: "gaffer demo", Email: "demo@gaffer.invalid"}
	if _, err := repo.Commit(ctx, "calc: an empty Go module", nil, workspace.CommitOptions{Author: author, When: demoEpoch()}); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	sd := filepath.Join(abs, ".git", "gaffer-demo")
	for name, content := range map[string]string{"script.yaml": demo.Script, "plan.md": demo.Plan} {
		if err := workspace.WriteFileAtomic(filepath.Join(sd, name), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
	}
	return strings.TrimSuffix(abs, "/"), nil
}

// writeDemoRecovery tells, in two lines per phase, the recovery the run
// went through: the repeated failure, what came of the replan it reserved
// (a revision accepted within the phase's frozen goal, one refused, or
// none: the replanner failed or was cut off), and how the phase ended.
func writeDemoRecovery(out io.Writer, s state.ExecutionState) {
	for _, r := range nodes.ReplansByPhase(s) {
		n := len(r.Failures)
		if n == 0 {
			continue
		}
		last := r.Failures[n-1]
		how := fmt.Sprintf("%d times", n)
		if n == 2 {
			how = "twice"
		}
		if slices.IndexFunc(r.Failures, func(f recovery.Failure) bool { return f.Fingerprint != last.Fingerprint }) < 0 {
			how += " the same way"
		}
		fmt.Fprintf(out, "\nRecovery: phase %d failed %s (%s: %s);\n", r.Phase, how, last.Category, failureGist(last.Tail))
		end := "the run ended before the phase did"
		if ps, err := s.PhaseState(r.Phase - 1); err == nil && ps.Status == state.PhaseCompleted {
			end = fmt.Sprintf("attempt %d passed", ps.Attempt)
		}
		switch {
		case r.Accepted > 0:
			fmt.Fprintf(out, "  replanned: the revised approach kept the phase's frozen goal and was accepted, and %s.\n", end)
		case r.Revised > 0:
			fmt.Fprintf(out, "  replanned, but no revision was accepted; %s.\n", end)
		default:
			fmt.Fprintf(out, "  a replan was tried, but the replanner gave no revision; %s.\n", end)
		}
	}
}

// gistRe finds the line of a failure's text that says what went wrong:
// a compiler's or test's file:line message, a failing test, a panic.
var gistRe = regexp.MustCompile(`(?m)^\s*(?:\S+\.\w+:\d+(?::\d+)?: .*|--- FAIL: .*|panic: .*)$`)

// failureGist is the line of a failure's text that says what went wrong,
// or its last line.
func failureGist(text string) string {
	if m := gistRe.FindString(text); m != "" {
		return strings.TrimSpace(m)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return cutRunes(strings.TrimSpace(lines[len(lines)-1]), 120)
}

// cutRunes cuts s at n runes, marking the cut with "…".
func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n])) + "…"
	}
	return s
}
