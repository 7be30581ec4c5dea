package demo

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/internal/gitcmd"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
)

// ShowLog shows the commits of branch in the repository at dir, as
// `git log --oneline` prints them, after the command line.
func ShowLog(ctx context.Context, out io.Writer, dir, branch string) error {
	fmt.Fprintf(out, "\n$ git log --oneline %s\n", branch)
	if err := runShown(gitcmd.Command(ctx, dir, nil, "log", "--oneline", branch), out); err != nil {
		return fmt.Errorf("demo: git log %s: %w", branch, err)
	}
	return nil
}

// GoTestError is go test failing on the run's branch.
type GoTestError struct {
	Branch, Dir string
	Err         error
}

func (e *GoTestError) Error() string {
	return fmt.Sprintf("demo: go test failed on %s in %s: %v", e.Branch, e.Dir, e.Err)
}

func (e *GoTestError) Unwrap() error { return e.Err }

// GoTest runs go test on branch of the repository at dir, in a temporary
// work tree when it is not the checkout's own ("HEAD"), showing its
// output. Tests that fail are a *GoTestError.
func GoTest(ctx context.Context, out io.Writer, dir, branch string) error {
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
		return &GoTestError{Branch: branch, Dir: dir, Err: err}
	}
	return nil
}

// runShown runs cmd with its output and errors on out.
func runShown(cmd *exec.Cmd, out io.Writer) error {
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}
