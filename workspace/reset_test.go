package workspace

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// phaseFixture is a repository at its pre-phase commit, with the user's
// untracked and ignored files in place; keep is the Untracked snapshot.
func phaseFixture(t *testing.T) (f *fixture, pre string, keep []string, before map[string]string) {
	f = newFixture(t)
	f.write(".gitignore", ".env\nbin/\n*.log\n")
	f.write("README.md", "# project\n")
	f.write("src/main.go", "package main\n\nfunc main() {}\n")
	f.write("src/util.go", "package main\n\nfunc util() {}\n")
	f.writeMode("run.sh", "#!/bin/sh\necho run\n", 0o755)
	f.write("docs/guide.md", "guide\n")
	f.symlink("latest", "docs/guide.md")
	pre = f.commit("baseline")
	// The user's own files, untracked or ignored, before the phase.
	f.write("notes.txt", "my notes\n")
	f.write("scratch/idea.txt", "an idea\n")
	f.write(".env", "TOKEN=secret\n")
	f.write("bin/tool", "built by the user")
	f.write("server.log", "user log\n")
	var err error
	if keep, err = f.repo.Untracked(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !equalStrings(keep, []string{"notes.txt", "scratch/idea.txt"}) {
		t.Fatalf("keep = %q", keep)
	}
	return f, pre, keep, treeSnapshot(t, f.dir)
}

// failedAttempt does what a failed phase does: edits, deletes, creates
// files in new directories, makes ignored files, commits part of it and
// leaves the rest uncommitted or staged.
func failedAttempt(f *fixture, keep []string) string {
	f.write("src/main.go", "package main\n\nfunc main() { broken() }\n")
	f.remove("src/util.go")
	f.chmod("run.sh", 0o644)
	f.write("src/extra.go", "package main\n")
	f.write("new/pkg/deep/x.go", "package deep\n")
	f.write("attempt.log", "ignored, made by the attempt\n")
	f.write("bin/output", "ignored build output")
	f.remove("latest")
	f.symlink("latest", "README.md")
	h := f.commitOpts("attempt", gafferTrailers("r1", "1", "1"), CommitOptions{Exclude: keep})
	// Uncommitted work after the commit.
	f.write("README.md", "# changed\n")
	f.write("after/y.txt", "uncommitted\n")
	f.write("staged.txt", "staged\n")
	f.git("add", "staged.txt")
	f.remove("docs/guide.md")
	return h
}

func TestResetToUndoesAFailedAttempt(t *testing.T) {
	f, pre, keep, _ := phaseFixture(t)
	attempt := failedAttempt(f, keep)
	if err := f.repo.ResetTo(f.ctx, pre, keep); err != nil {
		t.Fatal(err)
	}
	if got := f.head(); got != pre {
		t.Fatalf("HEAD = %s, want %s", got, pre)
	}
	if got := f.porcelain(); !equalStrings(got, []string{"?? notes.txt", "?? scratch/idea.txt"}) {
		t.Fatalf("git status --porcelain = %q", got)
	}
	f.git("diff", "--quiet", "HEAD") // tracked content equals the commit's
	for rel, want := range map[string]string{
		"src/main.go":      "package main\n\nfunc main() {}\n",
		"src/util.go":      "package main\n\nfunc util() {}\n",
		"README.md":        "# project\n",
		"docs/guide.md":    "guide\n",
		"notes.txt":        "my notes\n",
		"scratch/idea.txt": "an idea\n",
		".env":             "TOKEN=secret\n",
		"bin/tool":         "built by the user",
		"server.log":       "user log\n",
		"attempt.log":      "ignored, made by the attempt\n", // ignored: never touched
		"bin/output":       "ignored build output",
	} {
		if got := f.read(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	for _, gone := range []string{"src/extra.go", "new", "after", "staged.txt"} {
		if f.exists(gone) {
			t.Errorf("%s survived the reset", gone)
		}
	}
	if fi, err := os.Stat(f.abs("run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v %v", fi.Mode(), err)
	}
	if target, err := os.Readlink(f.abs("latest")); err != nil || target != "docs/guide.md" {
		t.Errorf("latest -> %q, %v", target, err)
	}
	if st := f.status(); !equalStrings(st.Untracked, keep) || len(st.Modified)+len(st.Added)+len(st.Deleted) != 0 {
		t.Errorf("Status = %+v", st)
	}
	// The discarded commit can still be recovered from the reflog.
	if !strings.Contains(f.git("reflog", "--format=%H %gs"), attempt+" commit: attempt") {
		t.Errorf("reflog does not hold the attempt: %s", f.git("reflog"))
	}
	f.git("fsck", "--no-progress")
}

func TestResetToIsIdempotentAndResumesADirtyTreeAtHead(t *testing.T) {
	f, pre, keep, before := phaseFixture(t)
	// A crash mid-phase: HEAD still at the pre-phase commit, tree dirty.
	f.write("src/main.go", "half written")
	f.remove("src/util.go")
	f.write("newdir/a/b.txt", "x")
	f.write(".hidden"+atomicfile.TempMarker+"123", "leftover of a killed write")
	for i := 0; i < 2; i++ {
		if err := f.repo.ResetTo(f.ctx, pre, keep); err != nil {
			t.Fatal(err)
		}
		if got := treeSnapshot(t, f.dir); !equalTrees(got, before) {
			t.Fatalf("run %d: tree differs from before the phase:\n%s", i, diffTrees(got, before))
		}
		if got := f.porcelain(); !equalStrings(got, []string{"?? notes.txt", "?? scratch/idea.txt"}) {
			t.Fatalf("run %d: git status = %q", i, got)
		}
	}
}

// TestResetToSurvivesACrashAnywhere stops ResetTo at each of its steps, as
// a kill would, and checks that running it again finishes the job.
func TestResetToSurvivesACrashAnywhere(t *testing.T) {
	for _, point := range []string{"reset:apply", "reset:restore", "reset:index", "reset:ref"} {
		t.Run(point, func(t *testing.T) {
			f, pre, keep, before := phaseFixture(t)
			failedAttempt(f, keep)
			crash := errors.New("killed")
			f.repo.fault = func(p string) error {
				if p == point {
					return crash
				}
				return nil
			}
			if err := f.repo.ResetTo(f.ctx, pre, keep); !errors.Is(err, crash) {
				t.Fatalf("ResetTo = %v, want the crash", err)
			}
			f.repo.fault = nil
			if err := f.repo.ResetTo(f.ctx, pre, keep); err != nil {
				t.Fatal(err)
			}
			if f.head() != pre {
				t.Fatal("HEAD not at the pre-phase commit")
			}
			got := treeSnapshot(t, f.dir)
			// The attempt's own ignored files stay: ignored files are never touched.
			delete(got, "attempt.log")
			delete(got, "bin/output")
			if !equalTrees(got, before) {
				t.Fatalf("tree differs:\n%s", diffTrees(got, before))
			}
			if p := f.porcelain(); !equalStrings(p, []string{"?? notes.txt", "?? scratch/idea.txt"}) {
				t.Fatalf("git status = %q", p)
			}
		})
	}
}

func TestResetToUsesTheTargetsIgnoreRules(t *testing.T) {
	f, pre, keep, _ := phaseFixture(t)
	// The attempt ignores its own output and un-ignores .env.
	f.write(".gitignore", "bin/\n*.log\ngen/\n")
	f.write("gen/out.txt", "generated")
	f.commitOpts("attempt", nil, CommitOptions{Exclude: append(keep, ".env")})
	if err := f.repo.ResetTo(f.ctx, pre, keep); err != nil {
		t.Fatal(err)
	}
	if f.exists("gen") {
		t.Error("gen/ survived: it is not ignored at the pre-phase commit")
	}
	if f.read(".env") != "TOKEN=secret\n" {
		t.Error(".env was touched")
	}
	if got := f.porcelain(); !equalStrings(got, []string{"?? notes.txt", "?? scratch/idea.txt"}) {
		t.Fatalf("git status = %q", got)
	}
}

func TestResetToFilesAndDirectoriesSwapped(t *testing.T) {
	f := newFixture(t)
	f.write("a", "file a\n")
	f.write("d/x.txt", "x\n")
	pre := f.commit("baseline")
	f.remove("a")
	f.write("a/inside.txt", "now a directory\n")
	f.remove("d")
	f.write("d", "now a file\n")
	f.commit("swap")
	f.write("a/more/deep.txt", "uncommitted\n")
	if err := f.repo.ResetTo(f.ctx, pre, nil); err != nil {
		t.Fatal(err)
	}
	if f.read("a") != "file a\n" || f.read("d/x.txt") != "x\n" {
		t.Fatalf("swap not undone: %v", treeSnapshot(t, f.dir))
	}
	if got := f.porcelain(); len(got) != 0 {
		t.Fatalf("git status = %q", got)
	}
}

func TestResetToRefusesToRemoveProtectedFiles(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", "*.log\n")
	f.write("a", "file a\n")
	pre := f.commit("baseline")
	f.remove("a")
	f.write("a/keep.log", "ignored, inside a directory standing where a was\n")
	f.write("b.txt", "made by the attempt\n")
	err := f.repo.ResetTo(f.ctx, pre, nil)
	var rc *ResetConflictError
	if !errors.As(err, &rc) || !errors.Is(err, ErrResetConflict) || rc.Path != "a" || !equalStrings(rc.Blocked, []string{"a/keep.log"}) {
		t.Fatalf("ResetTo = %v", err)
	}
	// Nothing was changed.
	if !f.exists("b.txt") || f.read("a/keep.log") == "" {
		t.Fatal("a refused reset changed the tree")
	}
	// A kept file where a directory must go is refused too.
	g := newFixture(t)
	g.write("dir/x.txt", "x\n")
	pre = g.commit("baseline")
	g.remove("dir")
	g.write("dir", "the user's file\n")
	if err := g.repo.ResetTo(g.ctx, pre, []string{"dir"}); !errors.Is(err, ErrResetConflict) {
		t.Fatalf("ResetTo over a kept file = %v", err)
	}
}

func TestResetToKeepsDirectoriesAndNestedRepos(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	pre := f.commit("baseline")
	f.write("mine/one.txt", "1\n")
	f.write("mine/two/three.txt", "3\n")
	runGit(t, f.dir, "init", "-q", "vendored")
	f.write("vendored/file.txt", "another repository\n")
	f.write("theirs.txt", "made by the attempt\n")
	if err := f.repo.ResetTo(f.ctx, pre, []string{"mine/"}); err != nil {
		t.Fatal(err)
	}
	if !f.exists("mine/one.txt") || !f.exists("mine/two/three.txt") || !f.exists("vendored/file.txt") {
		t.Fatal("a kept directory or a nested repository was touched")
	}
	if f.exists("theirs.txt") {
		t.Fatal("theirs.txt survived")
	}
}

func TestResetToAnotherBranchPointAndUnknownRevision(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "1\n")
	c1 := f.commit("one")
	f.write("a.txt", "2\n")
	f.write("b.txt", "b\n")
	f.commit("two")
	if err := f.repo.ResetTo(f.ctx, "HEAD~1", nil); err != nil {
		t.Fatal(err)
	}
	if f.head() != c1 || f.read("a.txt") != "1\n" || f.exists("b.txt") {
		t.Fatal("ResetTo(HEAD~1) did not go back")
	}
	if err := f.repo.ResetTo(f.ctx, "no-such-branch", nil); !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("ResetTo(unknown) = %v", err)
	}
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func diffTrees(got, want map[string]string) string {
	var b strings.Builder
	for _, k := range unionKeys(got, want) {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !wok:
			b.WriteString("+ " + k + " " + g + "\n")
		case !gok:
			b.WriteString("- " + k + " " + w + "\n")
		case g != w:
			b.WriteString("~ " + k + " " + g + " (want " + w + ")\n")
		}
	}
	return b.String()
}
