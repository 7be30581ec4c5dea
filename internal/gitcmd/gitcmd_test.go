package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// plant makes a repository whose .git/config names a program as its
// fsmonitor, ssh command, askpass and credential helper and whose
// post-checkout and pre-commit hooks run one too; each writes a marker
// file. It returns the repository and the marker directory.
func plant(t *testing.T) (repo, marks string) {
	t.Helper()
	repo, marks = t.TempDir(), t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "a.txt")
	run("commit", "-q", "-m", "one")
	script := func(name string) string {
		p := filepath.Join(marks, name+".sh")
		body := "#!/bin/sh\ntouch " + filepath.Join(marks, name+".ran") + "\n"
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run("config", "core.fsmonitor", script("fsmonitor"))
	run("config", "core.askPass", script("askpass"))
	run("config", "credential.helper", "!"+script("credential"))
	run("config", "core.sshCommand", script("ssh"))
	hooks := filepath.Join(repo, ".git", "hooks")
	for _, h := range []string{"post-checkout", "pre-commit", "post-commit", "reference-transaction"} {
		body := "#!/bin/sh\ntouch " + filepath.Join(marks, h+".ran") + "\n"
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return repo, marks
}

// ran lists the markers the planted programs left.
func ran(t *testing.T, marks string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(marks, "*.ran"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunIgnoresPlantedCommands runs, through Run and Command, the git
// commands gaffer runs on a repository (status, worktree add and remove,
// commit, ls-files) in one whose configuration and hooks an agent
// planted: none of the planted programs runs. Plain git runs them (so the
// test can fail).
func TestRunIgnoresPlantedCommands(t *testing.T) {
	ctx := context.Background()
	repo, marks := plant(t)
	wt := filepath.Join(t.TempDir(), "wt")
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	for _, args := range [][]string{
		{"status", "--porcelain"},
		{"worktree", "add", "-b", "gaffer/r-1", wt, "main"},
		{"ls-files", "-z", "--others"},
		{"commit", "-q", "--allow-empty", "-m", "two"},
		{"worktree", "remove", "--force", wt},
	} {
		if out, err := Command(ctx, repo, env, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := Run(ctx, repo, "status"); err != nil {
		t.Fatal(err)
	}
	if m := ran(t, marks); len(m) != 0 {
		t.Errorf("gaffer's git commands ran what the repository planted: %v", m)
	}
	cmd := exec.Command("git", "-C", repo, "status")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if m := ran(t, marks); len(m) == 0 {
		t.Errorf("plain git status ran nothing planted: the test proves nothing")
	}
}

func TestNetwork(t *testing.T) {
	for args, want := range map[string]bool{"fetch": true, "push": true, "clone": true, "ls-remote": true, "status": false, "worktree": false} {
		if got := Network([]string{"--quiet", args}); got != want {
			t.Errorf("Network(%s) = %v, want %v", args, got, want)
		}
	}
}
