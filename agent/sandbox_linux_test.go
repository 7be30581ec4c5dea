package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// plantGit is a command that tries what an agent of an in-place run would
// do to get code run outside the sandbox: plant an fsmonitor in
// .git/config and a hook, undo the read-only mount, then write a file of
// the work tree.
const plantGit = `git config core.fsmonitor /tmp/x.sh && echo planted-config
mkdir -p .git/hooks; printf '#!/bin/sh\ntouch /tmp/x\n' > .git/hooks/pre-commit && echo planted-hook
umount .git 2>/dev/null && echo unmounted
echo mine > mine.txt && echo wrote-tree`

// TestInPlaceCommandCannotWriteGit runs plantGit in a toolbox whose root
// is the repository itself (an in-place run): the writes to .git fail, the
// mount cannot be undone, and the work tree stays writable.
func TestInPlaceCommandCannotWriteGit(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	dir := testkit.GitRepo(t)
	cfg := testkit.ReadFile(t, filepath.Join(dir, ".git", "config"))
	var warned []string
	tb, err := NewToolbox(dir, ToolboxOptions{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	res, err := tb.Run(context.Background(), plantGit, nil)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	if len(warned) != 0 {
		t.Skipf("no sandbox here: %q", warned)
	}
	for _, bad := range []string{"planted-config", "planted-hook", "unmounted"} {
		if strings.Contains(res.Output, bad) {
			t.Errorf("the command %s:\n%s", bad, res.Output)
		}
	}
	if !strings.Contains(res.Output, "wrote-tree") {
		t.Errorf("the work tree was not writable:\n%s", res.Output)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, ".git", "config")); got != cfg {
		t.Errorf(".git/config changed:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("the hook was planted")
	}
}

// TestInPlaceCommandWritesGitWhenOff shows the test above can fail: with
// confinement off the same command plants both.
func TestInPlaceCommandWritesGitWhenOff(t *testing.T) {
	dir := testkit.GitRepo(t)
	tb, err := NewToolbox(dir, ToolboxOptions{Confine: ConfineOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	res, err := tb.Run(context.Background(), plantGit, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "planted-config") || !strings.Contains(res.Output, "planted-hook") {
		t.Errorf("unconfined, the command did not plant:\n%s", res.Output)
	}
}

// BenchmarkToolboxRunTrue runs `true` through a toolbox: unconfined, in a
// plain directory (Landlock, user namespace) and in a repository (an
// in-place run: the sandbox helper makes .git read-only first).
func BenchmarkToolboxRunTrue(b *testing.B) {
	for _, c := range []struct {
		name string
		dir  func() string
		conf Confinement
	}{
		{"off", b.TempDir, ConfineOff},
		{"worktree", b.TempDir, ConfineAuto},
		{"inplace", func() string { return testkit.GitRepo(b) }, ConfineAuto},
	} {
		b.Run(c.name, func(b *testing.B) {
			tb, err := NewToolbox(c.dir(), ToolboxOptions{Confine: c.conf})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tb.Close() })
			for b.Loop() {
				if res, err := tb.Run(context.Background(), "true", nil); err != nil || res.Failed() {
					b.Fatalf("run: %v %+v", err, res)
				}
			}
		})
	}
}
