package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/profile"
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
	gd := workspace.GitDir(dir)
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
	demo.WriteRecovery(out, snap.State)
	branch := host.RunBranch(id)
	if snap.State.Run.WorkTree == "" { // a run in place: its commits are on the user's branch
		branch = "HEAD"
	}
	if err := demo.ShowLog(ctx, out, dir, branch); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nExecution directory (committed on %s): %s\n", branch, snap.State.Run.ExecDir)
	if !skipTest {
		if err := demo.GoTest(ctx, out, dir, branch); err != nil {
			var te *demo.GoTestError
			if errors.As(err, &te) {
				return exitf(ExitHalted, "%w", err)
			}
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

// SetupDemo creates the demo repository in dir (demo.Setup; a new
// temporary directory when dir is ""). A dir that holds anything is
// ExitPrecondition.
func SetupDemo(ctx context.Context, dir string) (string, error) {
	dir, err := demo.Setup(ctx, dir)
	var de *demo.DirError
	if errors.As(err, &de) {
		return "", exitf(ExitPrecondition, "%w", err)
	}
	return dir, err
}
