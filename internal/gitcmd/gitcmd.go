package gitcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/internal/secretenv"
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
// git finds the repository from dir as it does for a user, through a .git
// file too; see Repo for a repository named without that.
func Args(dir string, args ...string) []string {
	return append([]string{"-C", dir}, settings(args)...)
}

// settings returns the safe settings for args, then args.
func settings(args []string) []string {
	out := safeConfig()
	if !Network(args) {
		out = append(out, localConfig()...)
	}
	return append(out, args...)
}

// Command returns the command that runs git args in dir (see Args), in
// environment env (nil: this process's; see Environ) with no terminal
// prompt and the C locale (git's messages are read).
func Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	return command(ctx, Args(dir, args...), Environ(env, args))
}

func command(ctx context.Context, argv, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_EDITOR=true", "GIT_PAGER=cat")
	return cmd
}

// Environ returns the environment git args runs in, from env (nil: this
// process's): without the variables named like secrets (see package
// secretenv), which a program git runs would otherwise read, for every
// command but those that reach another repository (Network), whose
// credential helpers may need them. The result is a copy.
func Environ(env []string, args []string) []string {
	if env == nil {
		env = os.Environ()
	}
	if Network(args) {
		return slices.Clone(env)
	}
	return secretenv.Without(env)
}

// Run runs git args in dir (see Command) and returns its standard output.
// A failure is an *Error carrying git's standard error.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return run(Command(ctx, dir, nil, args...), args)
}

func run(cmd *exec.Cmd, args []string) ([]byte, error) {
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

// Repo names a repository for git without letting git discover it: its
// git directory and, unless it is bare, its work tree. git then reads no
// .git file (which an agent working in the tree can rewrite to name a
// repository of its own, whose configuration runs its filters), and no
// GIT_DIR or other variable of the environment that locates a
// repository.
type Repo struct {
	GitDir   string // absolute
	WorkTree string // absolute; "" for a bare repository
}

// Args returns the full argument list (without "git") for running args
// in r: --git-dir, --work-tree (with -C the work tree, so that paths are
// relative to it), the safe settings, args.
func (r Repo) Args(args ...string) []string {
	out := []string{"--git-dir=" + r.GitDir}
	if r.WorkTree != "" {
		out = append(out, "-C", r.WorkTree, "--work-tree="+r.WorkTree)
	}
	return append(out, settings(args)...)
}

// Command returns the command that runs git args in r (see Repo.Args),
// as Command does, with the variables that locate a repository taken out
// of env.
func (r Repo) Command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	env = Environ(env, args)
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(locating(), name)
	})
	return command(ctx, r.Args(args...), env)
}

// Run runs git args in r (see Repo.Command) and returns its standard
// output; a failure is an *Error.
func (r Repo) Run(ctx context.Context, args ...string) ([]byte, error) {
	return run(r.Command(ctx, nil, args...), args)
}

// At returns the Repo of the work tree dir when its .git is a directory
// (not a .git file, nor a symbolic link): git would find that one itself,
// but named it cannot be swapped for another through the environment.
// ok is false otherwise (a linked work tree, a bare repository), where
// the caller names the git directory it knows (Repo) or leaves git to
// find it (Command).
func At(dir string) (r Repo, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Repo{}, false
	}
	dot := filepath.Join(abs, ".git")
	if fi, err := os.Lstat(dot); err != nil || !fi.IsDir() {
		return Repo{}, false
	}
	return Repo{GitDir: dot, WorkTree: abs}, true
}

// locating are the environment variables with which git finds a
// repository, its index or its objects elsewhere than it is told.
func locating() []string {
	return []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}
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
