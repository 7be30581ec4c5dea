package gitcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/ioerr"
)

// safeConfig returns the -c settings every command gets: each turns off a
// setting with which a repository's configuration makes git run a program.
func safeConfig() []string {
	return []string{
		"-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.askPass=",
		"-c", "commit.gpgSign=false",
		"-c", "tag.gpgSign=false",
		"-c", "push.gpgSign=false",
		"-c", "protocol.ext.allow=never",
		"-c", "diff.external=",
		"-c", "core.editor=true",
		"-c", "sequence.editor=true",
		"-c", "core.pager=cat",
	}
}

// localConfig returns the settings a command that reaches no other
// repository also gets: no ssh command, no credential helper.
func localConfig() []string {
	return []string{
		"-c", "core.sshCommand=false",
		"-c", "credential.helper=",
	}
}

// Network says whether git command args reaches another repository
// (fetch, push, clone, ls-remote) and so keeps the user's ssh command and
// credential helpers.
func Network(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		return slices.Contains([]string{"fetch", "push", "clone", "ls-remote"}, a)
	}
	return false
}

// Args returns the full argument list (without "git") for running args
// in the work tree or git directory dir: -C dir, the safe settings, args.
func Args(dir string, args ...string) []string {
	out := []string{"-C", dir}
	out = append(out, safeConfig()...)
	if !Network(args) {
		out = append(out, localConfig()...)
	}
	return append(out, args...)
}

// Command returns the command that runs git args in dir (see Args), in
// environment env (nil: this process's) with no terminal prompt and the C
// locale (git's messages are read).
func Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", Args(dir, args...)...)
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_EDITOR=true", "GIT_PAGER=cat")
	return cmd
}

// Run runs git args in dir (see Command) and returns its standard output.
// A failure is an *Error carrying git's standard error.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := Command(ctx, dir, nil, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), &Error{Msg: fmt.Sprintf("git %s: %s", strings.Join(args, " "), msg), Errno: ioerr.Named(msg)}
	}
	return out.Bytes(), nil
}

// Error is a git command that failed: its message is git's standard
// error. When git names a fault of the machine there (a full disk), the
// error matches that errno, as a failed write of gaffer's own would, so
// that serve tells the machine's fault from the run's (ioerr.Machine).
type Error struct {
	Msg   string
	Errno error // nil, or the machine's errno git's message names
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the machine's errno git named, or nil.
func (e *Error) Unwrap() error { return e.Errno }
