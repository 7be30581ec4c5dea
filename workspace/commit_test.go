package workspace

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func gafferTrailers(run, phase, attempt string) []Trailer {
	return []Trailer{{"Gaffer-Run", run}, {"Gaffer-Phase", phase}, {"Gaffer-Attempt", attempt}}
}

func TestCommitStagesEverythingButIgnoredAndExcluded(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", ".env\nbin/\n")
	f.write("a.txt", "a\n")
	f.write("dir/b.txt", "b\n")
	f.write("del.txt", "gone soon\n")
	f.writeMode("run.sh", "#!/bin/sh\necho hi\n", 0o644)
	base := f.commit("baseline")

	// The user's files, there before the phase.
	f.write("notes.txt", "my notes\n")
	f.write("scratch/idea.txt", "idea\n")
	keep, err := f.repo.Untracked(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The phase's work.
	f.write("a.txt", "a changed\n")
	f.remove("del.txt")
	f.write("new/pkg/c.go", "package pkg\n")
	f.chmod("run.sh", 0o755)
	f.symlink("link", "a.txt")
	f.write(".env", "SECRET=1\n")
	f.write("bin/tool", "elf")

	h := f.commitOpts("Phase 1: the work\n\nBody text.", gafferTrailers("r-42", "1", "2"), CommitOptions{Exclude: keep})
	if got := f.head(); got != h {
		t.Fatalf("HEAD = %s, want the new commit %s", got, h)
	}
	tracked := sortedLines(f.git("ls-tree", "-r", "--name-only", "HEAD"))
	want := []string{".gitignore", "a.txt", "dir/b.txt", "link", "new/pkg/c.go", "run.sh"}
	if !equalStrings(tracked, want) {
		t.Fatalf("tracked = %q, want %q", tracked, want)
	}
	if mode := strings.Fields(f.git("ls-tree", "HEAD", "run.sh"))[0]; mode != "100755" {
		t.Errorf("run.sh mode = %s, want 100755", mode)
	}
	if mode := strings.Fields(f.git("ls-tree", "HEAD", "link"))[0]; mode != "120000" {
		t.Errorf("link mode = %s, want 120000", mode)
	}
	if got := f.git("rev-parse", "HEAD~1"); strings.TrimSpace(got) != base {
		t.Errorf("parent = %s, want %s", got, base)
	}
	// Only the user's files remain outside the commit, and the index
	// agrees with HEAD and the work tree.
	if got := f.porcelain(); !equalStrings(got, []string{"?? notes.txt", "?? scratch/idea.txt"}) {
		t.Fatalf("git status = %q", got)
	}
	f.git("diff", "--quiet")
	f.git("diff", "--cached", "--quiet")
	f.git("fsck", "--strict", "--no-progress")

	// The message and its trailers, as git reads them.
	wantMsg := "Phase 1: the work\n\nBody text.\n\nGaffer-Run: r-42\nGaffer-Phase: 1\nGaffer-Attempt: 2\n"
	if got := f.git("log", "-1", "--format=%B"); strings.TrimRight(got, "\n") != strings.TrimRight(wantMsg, "\n") {
		t.Fatalf("message = %q, want %q", got, wantMsg)
	}
	if got := f.git("log", "-1", "--format=%(trailers:key=Gaffer-Run,valueonly)"); strings.TrimSpace(got) != "r-42" {
		t.Errorf("git's Gaffer-Run trailer = %q", got)
	}
	parsed := sortedLines(f.git("log", "-1", "--format=%(trailers:only,unfold)"))
	if !equalStrings(parsed, []string{"Gaffer-Attempt: 2", "Gaffer-Phase: 1", "Gaffer-Run: r-42"}) {
		t.Errorf("git's trailers = %q", parsed)
	}
	cmd := exec.Command("git", "interpret-trailers", "--parse")
	cmd.Stdin = strings.NewReader(f.git("log", "-1", "--format=%B"))
	out, err := cmd.Output()
	if err != nil || string(out) != "Gaffer-Run: r-42\nGaffer-Phase: 1\nGaffer-Attempt: 2\n" {
		t.Errorf("git interpret-trailers --parse = %q, %v", out, err)
	}
	ts, err := f.repo.Trailers(f.ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0] != (Trailer{"Gaffer-Run", "r-42"}) || ts[2] != (Trailer{"Gaffer-Attempt", "2"}) {
		t.Fatalf("Trailers = %v", ts)
	}
	if got := f.git("log", "-1", "--format=%an <%ae>|%cn <%ce>"); strings.TrimSpace(got) != "Test Author <test@example.com>|Test Author <test@example.com>" {
		t.Errorf("author|committer = %q", got)
	}
	if st := f.status(); !equalStrings(st.Untracked, keep) || len(st.Modified)+len(st.Added)+len(st.Deleted) != 0 {
		t.Errorf("Status after commit = %+v", st)
	}
}

func TestCommitRefusesEmpty(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("baseline")
	_, err := f.repo.Commit(f.ctx, "nothing", nil, CommitOptions{Author: testAuthor})
	if !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("empty commit: %v, want ErrNothingToCommit", err)
	}
	if f.head() != base {
		t.Fatal("a refused commit moved HEAD")
	}
	h := f.commitOpts("marker", gafferTrailers("r", "1", "1"), CommitOptions{AllowEmpty: true})
	if h == base || strings.TrimSpace(f.git("rev-parse", "HEAD^{tree}")) != strings.TrimSpace(f.git("rev-parse", base+"^{tree}")) {
		t.Fatal("AllowEmpty did not make an empty commit")
	}
	// Only excluded changes: nothing to commit either.
	f.write("mine.txt", "x\n")
	_, err = f.repo.Commit(f.ctx, "nothing", nil, CommitOptions{Author: testAuthor, Exclude: []string{"mine.txt"}})
	if !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("commit of excluded files only: %v", err)
	}
}

func TestCommitFirstCommitOnUnbornBranch(t *testing.T) {
	f := newFixture(t)
	if _, err := f.repo.Head(f.ctx); !errors.Is(err, ErrNoCommits) || !strings.Contains(err.Error(), "main") {
		t.Fatalf("Head on unborn branch: %v", err)
	}
	if _, err := f.repo.Commit(f.ctx, "empty", nil, CommitOptions{Author: testAuthor}); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("first commit of an empty tree: %v", err)
	}
	f.write("a.txt", "a\n")
	h := f.commit("first")
	if got := strings.TrimSpace(f.git("rev-parse", "main")); got != h {
		t.Fatalf("main = %s, want %s", got, h)
	}
	if got := strings.TrimSpace(f.git("rev-list", "--count", "HEAD")); got != "1" {
		t.Fatalf("commits = %s", got)
	}
	if !strings.Contains(f.git("reflog", "-1"), "commit (initial): first") {
		t.Errorf("reflog: %s", f.git("reflog"))
	}
}

func TestCommitExcludeUnstagesAndKeepsHeadVersion(t *testing.T) {
	f := newFixture(t)
	f.write("tracked.txt", "v1\n")
	f.write("other.txt", "o\n")
	f.commit("baseline")
	f.write("mine.txt", "user\n")
	f.git("add", "mine.txt") // staged by someone, yet excluded
	f.write("tracked.txt", "v2\n")
	f.write("other.txt", "o2\n")
	f.commitOpts("phase", nil, CommitOptions{Exclude: []string{"mine.txt", "./tracked.txt"}})
	if got := sortedLines(f.git("ls-tree", "-r", "--name-only", "HEAD")); !equalStrings(got, []string{"other.txt", "tracked.txt"}) {
		t.Fatalf("tracked = %q", got)
	}
	if got := f.git("show", "HEAD:tracked.txt"); got != "v1\n" {
		t.Fatalf("excluded tracked file was committed: %q", got)
	}
	if got := f.porcelain(); !equalStrings(got, []string{" M tracked.txt", "?? mine.txt"}) {
		t.Fatalf("git status = %q", got)
	}
}

func TestCommitMergesIntoExistingTrailerBlock(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.commitOpts("subject\n\nbody\n\nSigned-off-by: A <a@example.com>\n", []Trailer{{"Gaffer-Run", "r1"}}, CommitOptions{})
	got := f.git("log", "-1", "--format=%B")
	if !strings.HasSuffix(strings.TrimRight(got, "\n"), "Signed-off-by: A <a@example.com>\nGaffer-Run: r1") {
		t.Fatalf("message = %q", got)
	}
	parsed := sortedLines(f.git("log", "-1", "--format=%(trailers:only)"))
	if !equalStrings(parsed, []string{"Gaffer-Run: r1", "Signed-off-by: A <a@example.com>"}) {
		t.Fatalf("git trailers = %q", parsed)
	}
}

func TestCommitRejectsBadInput(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	for _, tc := range []struct {
		msg string
		tr  []Trailer
		err error
	}{
		{"  \n\t\n", nil, ErrEmptyMessage},
		{"ok", []Trailer{{"Bad Key", "v"}}, ErrInvalidTrailer},
		{"ok", []Trailer{{"", "v"}}, ErrInvalidTrailer},
		{"ok", []Trailer{{"-x", "v"}}, ErrInvalidTrailer},
		{"ok", []Trailer{{"Key", "two\nlines"}}, ErrInvalidTrailer},
	} {
		if _, err := f.repo.Commit(f.ctx, tc.msg, tc.tr, CommitOptions{Author: testAuthor}); !errors.Is(err, tc.err) {
			t.Errorf("Commit(%q, %v) = %v, want %v", tc.msg, tc.tr, err, tc.err)
		}
	}
	if _, err := f.repo.Head(f.ctx); !errors.Is(err, ErrNoCommits) {
		t.Fatal("a rejected commit was made")
	}
}

func TestCommitWaitsForNoOneButReportsLocks(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.write(".git/index.lock", "")
	_, err := f.repo.Commit(f.ctx, "x", nil, CommitOptions{Author: testAuthor})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "index.lock") {
		t.Fatalf("Commit with index.lock present: %v", err)
	}
}

func TestCommitCrashBetweenIndexAndBranch(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("baseline")
	f.write("b.txt", "b\n")
	crash := errors.New("killed")
	f.repo.fault = func(p string) error {
		if p == "commit:ref" {
			return crash
		}
		return nil
	}
	if _, err := f.repo.Commit(f.ctx, "phase", nil, CommitOptions{Author: testAuthor}); !errors.Is(err, crash) {
		t.Fatalf("Commit = %v", err)
	}
	f.repo.fault = nil
	if f.head() != base {
		t.Fatal("branch moved before the crash point")
	}
	// The change is staged: the workflow sees a dirty tree.
	if st := f.status(); !equalStrings(st.Added, []string{"b.txt"}) {
		t.Fatalf("status after crash = %+v", st)
	}
	if err := f.repo.ResetTo(f.ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	if st := f.status(); !st.IsClean() || f.exists("b.txt") {
		t.Fatalf("after reset: %+v", st)
	}
}
