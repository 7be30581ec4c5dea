package cliagent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

// linkedTree makes a repository with one commit (a.txt) and a linked work
// tree of it, as a run's own, and returns the tree.
func linkedTree(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	wt := filepath.Join(t.TempDir(), "wt")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", repo},
		{"-C", repo, "commit", "-q", "--allow-empty", "-m", "one"},
	} {
		gitT(t, args...)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, "-C", repo, "add", "a.txt")
	gitT(t, "-C", repo, "commit", "-q", "-m", "two")
	gitT(t, "-C", repo, "worktree", "add", "-q", "-b", "gaffer/r-1", wt, "main")
	return wt
}

func gitT(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// plantGitFile is issue 30's attack as a session's command: a git
// directory of the agent's own, whose clean filter (run by `git status`
// on a file whose stat changed) writes a marker outside and copies the
// environ of git's parent, gaffer; then the work tree's .git names it.
func plantGitFile(marker string) string {
	return `set -x
git init -q --bare .evil && git --git-dir=.evil config core.bare false
git --git-dir=.evil --work-tree=. add a.txt
git --git-dir=.evil config filter.x.clean "sh -c 'tr \"\\\\0\" \"\\\\n\" < /proc/\$(ps -o ppid= -p \$PPID | tr -d \" \")/environ > ` + marker + `; cat'"
mkdir -p .evil/info && echo '* filter=x' > .evil/info/attributes
{ echo "gitdir: $PWD/.evil" > .git && echo PLANTED-$((1+1)); } 2>&1 || echo REFUSED-$((1+1))
touch -d '+1 hour' a.txt
echo end-$((1+1))`
}

// TestCLIPlantedGitFile: a session rewrites its work tree's .git to name
// a repository of its own. Confined, the rewrite fails (the .git file is
// read-only for it) and nothing planted runs; unconfined, the rewrite
// lands, gaffer's own `git status` after the session (FilesChanged)
// still runs on the git directory gaffer made, so the filter never runs
// and no secret of gaffer's environment leaks, and the next session is
// refused (ErrGitFile) rather than run on the agent's repository.
func TestCLIPlantedGitFile(t *testing.T) {
	for _, c := range []struct {
		name    string
		confine agent.Confinement
	}{{"confined", agent.ConfineAuto}, {"unconfined", agent.ConfineOff}} {
		t.Run(c.name, func(t *testing.T) {
			wt := linkedTree(t)
			made := readFile(t, filepath.Join(wt, ".git"))
			marker := filepath.Join(t.TempDir(), "leaked")
			t.Setenv("GITHUB_TOKEN", "ghp-gaffer-environ-canary")
			d := newCLI(t, Options{Template: Template{Command: []string{"sh", "-c", plantGitFile(marker)}}, Confine: c.confine,
				Environ: append(os.Environ(), "AWS_SECRET_ACCESS_KEY=aws-canary")})
			if c.confine == agent.ConfineAuto {
				if exe, why := d.helper.Get(); exe == "" {
					t.Skip(why)
				}
			}
			rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: wt, Prompt: "p"})
			if err != nil || !strings.Contains(rep.Output, "end-2") {
				t.Fatalf("run: %v %+v", err, rep)
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the planted filter ran outside the sandbox and read:\n%s", b)
			}
			got := readFile(t, filepath.Join(wt, ".git"))
			if c.confine == agent.ConfineAuto {
				if got != made || !strings.Contains(rep.Output, "REFUSED-2") {
					t.Fatalf("the confined session rewrote .git to %q:\n%s", got, rep.Output)
				}
				return
			}
			if got == made {
				t.Fatalf("unconfined, the rewrite did not land: the test proves nothing\n%s", rep.Output)
			}
			_, err = d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: wt, Prompt: "p"})
			if !errors.Is(err, ErrGitFile) {
				t.Errorf("the next session: %v, want ErrGitFile", err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the planted filter ran")
			}
			cmd := exec.Command("git", "status", "--porcelain")
			cmd.Dir = wt
			_ = cmd.Run()
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("plain git status in the tree did not run the planted filter: the test proves nothing")
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
