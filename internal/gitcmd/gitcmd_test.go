package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestRepoIgnoresAPlantedGitFile is issue 30's attack on gaffer's own
// git: an agent rewrites its linked work tree's .git file to name a git
// directory of its own, whose configuration holds a clean filter (run by
// `git status` on every file whose stat changed) that writes a marker
// and dumps its environment. git run through Repo, with the git
// directory gaffer made, runs none of it; git left to find the
// repository through the .git file (Command, plain git) runs the filter,
// so the test can fail. A filter of the real repository's own
// configuration still runs through Repo, and sees no secret of the
// environment it was given.
func TestRepoIgnoresAPlantedGitFile(t *testing.T) {
	ctx := context.Background()
	repo, _ := plant(t)
	marks := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wt := filepath.Join(t.TempDir(), "wt")
	git("-C", repo, "-c", "core.hooksPath=/dev/null", "worktree", "add", "-q", "-b", "gaffer/r-1", wt, "main")
	gitFile := filepath.Join(wt, ".git")
	made, err := os.ReadFile(gitFile)
	if err != nil {
		t.Fatal(err)
	}
	real := Repo{GitDir: strings.TrimSpace(strings.TrimPrefix(string(made), "gitdir:")), WorkTree: wt}

	// The real repository's own filter, which gaffer's git does run.
	dump := filepath.Join(marks, "own-filter-env")
	git("-C", repo, "config", "filter.own.clean", "sh -c 'env > "+dump+"; cat'")
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "attributes"), []byte("*.txt filter=own\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The agent's repository, with the index of the work tree's files.
	evil := filepath.Join(wt, ".evil")
	git("init", "-q", "--bare", evil)
	git("--git-dir="+evil, "config", "core.bare", "false")
	git("--git-dir="+evil, "--work-tree="+wt, "add", "a.txt")
	git("--git-dir="+evil, "config", "filter.x.clean", "sh -c 'touch "+filepath.Join(marks, "evil.ran")+"; cat'")
	if err := os.MkdirAll(filepath.Join(evil, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(evil, "info", "attributes"), []byte("* filter=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gitFile, []byte("gitdir: "+evil+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A new mtime, same size: git must hash the file, through the filter.
	touch := func() {
		future := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(wt, "a.txt"), future, future); err != nil {
			t.Fatal(err)
		}
	}

	touch()
	env := append(os.Environ(), "GITHUB_TOKEN=ghp-planted-canary", "AWS_SECRET_ACCESS_KEY=aws-planted-canary")
	if out, err := real.Command(ctx, env, "status", "--porcelain").CombinedOutput(); err != nil {
		t.Fatalf("status through Repo: %v\n%s", err, out)
	}
	if _, err := real.Run(ctx, "diff", "--stat"); err != nil {
		t.Fatalf("diff through Repo: %v", err)
	}
	if _, err := os.Stat(filepath.Join(marks, "evil.ran")); err == nil {
		t.Fatal("git through Repo ran the filter of the repository the .git file names")
	}
	seen, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the real repository's own filter did not run through Repo (%v): the test proves nothing", err)
	}
	if s := string(seen); strings.Contains(s, "canary") || !strings.Contains(s, "PATH=") {
		t.Errorf("the filter's environment holds a secret, or is empty:\n%s", s)
	}

	touch()
	if out, err := Command(ctx, wt, env, "status", "--porcelain").CombinedOutput(); err != nil {
		t.Fatalf("status through the .git file: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(marks, "evil.ran")); err != nil {
		t.Errorf("git left to read the .git file did not run the planted filter: the test proves nothing")
	}
}

// TestEnvironKeepsSecretsForNetworkOnly: local commands lose the
// variables named like secrets; fetch and push keep them for the user's
// credential helpers.
func TestEnvironKeepsSecretsForNetworkOnly(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=t", "HOME=/h"}
	if got := Environ(env, []string{"status"}); strings.Join(got, " ") != "PATH=/bin HOME=/h" {
		t.Errorf("status: %q", got)
	}
	if got := Environ(env, []string{"fetch", "origin"}); len(got) != 3 {
		t.Errorf("fetch: %q", got)
	}
	cmd := Repo{GitDir: "/g", WorkTree: "/w"}.Command(context.Background(), append(env, "GIT_DIR=/elsewhere", "GIT_INDEX_FILE=/x"), "status")
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_INDEX_FILE=") || strings.HasPrefix(kv, "GITHUB_TOKEN=") {
			t.Errorf("Repo.Command keeps %s", kv)
		}
	}
}
