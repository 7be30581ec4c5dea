package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// ignoredFixture has a baseline commit and every kind of ignore rule:
// root and nested .gitignore, .git/info/exclude and the global excludes
// file at its default place ($XDG_CONFIG_HOME/git/ignore).
func ignoredFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.write(".gitignore", ".env\nbin/\n*.log\n/build\n")
	f.write("sub/.gitignore", "secret.txt\n")
	f.write("sub/code.go", "package sub\n")
	f.write("README.md", "hello\n")
	f.write(".git/info/exclude", "local.tmp\n")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if err := os.MkdirAll(filepath.Join(xdg, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "git", "ignore"), []byte("*.global\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.commit("baseline")
	// Ignored files of every kind.
	f.write(".env", "SECRET=1\n")
	f.write("bin/app", "binary")
	f.write("bin/deep/x", "binary")
	f.write("debug.log", "log\n")
	f.write("sub/deep/trace.log", "log\n")
	f.write("sub/secret.txt", "secret\n")
	f.write("local.tmp", "tmp\n")
	f.write("cache.global", "g\n")
	f.write("build/out.o", "o\n")
	return f
}

func TestStatusIgnoresIgnoredFiles(t *testing.T) {
	f := ignoredFixture(t)
	if st := f.status(); !st.IsClean() {
		t.Fatalf("status with only ignored files = %+v, want clean", st)
	}
	if p := f.porcelain(); len(p) != 0 {
		t.Fatalf("git status disagrees with the fixture: %q", p)
	}

	f.write("notes.txt", "mine\n")
	f.write("sub/build/keep.txt", "not the root build\n") // /build is anchored
	st := f.status()
	if st.IsClean() {
		t.Fatal("IsClean with an untracked file")
	}
	want := []string{"notes.txt", "sub/build/keep.txt"}
	if !equalStrings(st.Untracked, want) {
		t.Fatalf("Untracked = %q, want %q", st.Untracked, want)
	}
	if got := f.porcelain(); !equalStrings(got, []string{"?? notes.txt", "?? sub/build/keep.txt"}) {
		t.Fatalf("git status --porcelain = %q", got)
	}
	u, err := f.repo.Untracked(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStrings(u, want) {
		t.Fatalf("Untracked() = %q, want %q", u, want)
	}
}

func TestStatusCategories(t *testing.T) {
	f := newFixture(t)
	f.write("keep.txt", "same\n")
	f.write("mod.txt", "one\n")
	f.write("del.txt", "bye\n")
	f.write("unstaged-del.txt", "bye\n")
	f.writeMode("tool.sh", "#!/bin/sh\n", 0o644)
	f.write(".gitignore", "vendor/\n")
	f.write("vendor/lib.go", "package lib\n")
	f.git("add", "-f", "vendor/lib.go") // a tracked file in an ignored directory
	f.commit("baseline")

	f.write("mod.txt", "two\n")
	f.git("rm", "-q", "--cached", "del.txt") // deleted from the index, still on disk
	f.remove("unstaged-del.txt")
	f.chmod("tool.sh", 0o755)
	f.write("staged.txt", "new\n")
	f.git("add", "staged.txt")
	f.write("vendor/lib.go", "package lib // changed\n")
	f.write("vendor/other.go", "package lib\n") // ignored

	st := f.status()
	check := func(name string, got, want []string) {
		t.Helper()
		if !equalStrings(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check("Modified", st.Modified, []string{"mod.txt", "tool.sh", "vendor/lib.go"})
	check("Added", st.Added, []string{"staged.txt"})
	check("Deleted", st.Deleted, []string{"del.txt", "unstaged-del.txt"})
	check("Untracked", st.Untracked, []string{"del.txt"})
	want := []string{" D unstaged-del.txt", " M mod.txt", " M tool.sh", " M vendor/lib.go", "?? del.txt", "A  staged.txt", "D  del.txt"}
	got := sortedLines(f.git("status", "--porcelain=v1", "-uall", "--no-renames"))
	if !equalStrings(got, want) {
		t.Errorf("git status = %q, want %q", got, want)
	}
}

func TestStatusRacyAndStatCache(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "aaaa\n")
	f.commit("baseline")
	// Same size, rewritten at once after the commit wrote the index: the
	// stat data alone cannot tell, so the content must be read.
	f.write("a.txt", "bbbb\n")
	if st := f.status(); !equalStrings(st.Modified, []string{"a.txt"}) {
		t.Fatalf("same-size rewrite not seen: %+v", st)
	}
	f.write("a.txt", "aaaa\n")
	if st := f.status(); !st.IsClean() {
		t.Fatalf("restored content still reported: %+v", st)
	}
}

func TestStatusNestedRepoAndSymlink(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.symlink("link", "a.txt")
	f.commit("baseline")
	if st := f.status(); !st.IsClean() {
		t.Fatalf("status after commit with a symlink = %+v", st)
	}
	runGit(t, f.dir, "init", "-q", "inner")
	f.write("inner/file.txt", "x\n")
	st := f.status()
	if !equalStrings(st.Untracked, []string{"inner/"}) {
		t.Fatalf("Untracked = %q, want [inner/]", st.Untracked)
	}
	if got := f.porcelain(); !equalStrings(got, []string{"?? inner/"}) {
		t.Fatalf("git status = %q", got)
	}
}

func TestStatusSkipsTempLeftovers(t *testing.T) {
	f := newFixture(t)
	f.write("plan.md", "plan\n")
	f.commit("baseline")
	f.write(".plan.md"+atomicfile.TempMarker+"abc123", "half written")
	if st := f.status(); !st.IsClean() {
		t.Fatalf("a temp leftover is reported: %+v", st)
	}
	if _, err := f.repo.Commit(f.ctx, "nothing", nil, CommitOptions{Author: testAuthor}); err != ErrNothingToCommit {
		t.Fatalf("Commit with only a temp leftover: %v, want ErrNothingToCommit", err)
	}
}

func TestStatusHonoursCoreExcludesFile(t *testing.T) {
	f := newFixture(t)
	home := os.Getenv("HOME")
	if err := os.WriteFile(filepath.Join(home, "my-ignore"), []byte("*.mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("GIT_CONFIG_GLOBAL"), []byte("[core]\n\texcludesFile = ~/my-ignore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("a.txt", "a\n")
	f.commit("base")
	f.write("x.mine", "x\n")
	f.write("y.txt", "y\n")
	if st := f.status(); !equalStrings(st.Untracked, []string{"y.txt"}) {
		t.Fatalf("Untracked = %q", st.Untracked)
	}
	if got := f.porcelain(); !equalStrings(got, []string{"?? y.txt"}) {
		t.Fatalf("git status = %q", got)
	}
	// The repository's own setting wins.
	f.git("config", "core.excludesFile", "/nonexistent")
	if st := f.status(); !equalStrings(st.Untracked, []string{"x.mine", "y.txt"}) {
		t.Fatalf("Untracked with a repo-level excludesFile = %q", st.Untracked)
	}
}
