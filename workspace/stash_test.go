package workspace

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// TestStashCleanRestore records tracked, staged, executable, symlinked,
// deleted and untracked changes, lets a "run" clean the tree and commit
// over some of the same paths, then restores: the work tree has the
// user's bytes and modes back, the index the user's staged entries, and
// the run's commits are untouched.
func TestStashCleanRestore(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", "*.log\n")
	f.write("a.txt", "a\n")
	f.write("b.txt", "b\n")
	f.write("gone.txt", "gone\n")
	f.write("run.sh", "echo\n")
	f.write("dir/c.txt", "c\n")
	f.commit("start")

	f.write("a.txt", "a edited, unstaged\n")       // tracked edit
	f.write("b.txt", "b staged\n")                 // staged edit…
	f.git("add", "b.txt")                          //
	f.write("b.txt", "b staged, then edited\n")    // …and edited again
	f.write("new.txt", "staged new file\n")        // staged new file
	f.git("add", "new.txt")                        //
	f.remove("gone.txt")                           // deleted, unstaged
	f.chmod("run.sh", 0o755)                       // mode change
	f.write("notes.txt", "my untracked notes\n")   // untracked
	f.write("plan-writes.txt", "user's version\n") // untracked, the run writes it too
	f.symlink("link", "a.txt")                     // untracked symbolic link
	f.write("debug.log", "ignored\n")              // ignored: never touched
	wantTree := treeSnapshot(t, f.dir)
	wantPorcelain := f.porcelain()
	wantCached := f.git("diff", "--cached")
	base := f.head()

	w, err := f.repo.Stash(f.ctx, "r-1", nil)
	if err != nil || w == "" {
		t.Fatalf("Stash: %q, %v", w, err)
	}
	if again, err := f.repo.Stash(f.ctx, "r-1", nil); err != nil || again != w {
		t.Fatalf("Stash again: %q, %v; want the same commit %s", again, err, w)
	}
	if got := strings.TrimSpace(f.git("rev-parse", StashRefPrefix+"r-1")); got != w {
		t.Fatalf("ref at %s, want %s", got, w)
	}
	if got := treeSnapshot(t, f.dir); !maps.Equal(got, wantTree) {
		t.Fatalf("Stash changed the work tree")
	}

	// The run: a clean tree, then commits touching a user's path.
	if err := f.repo.ResetTo(f.ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	if p := f.porcelain(); len(p) != 0 {
		t.Fatalf("not clean after the reset: %v", p)
	}
	f.write("plan-writes.txt", "the run's version\n")
	f.write("a.txt", "a changed by the run\n")
	f.write("run-only.txt", "run\n")
	f.commit("phase 1")
	runHead := f.head()

	for i := range 2 { // idempotent
		overlap, err := f.repo.RestoreStash(f.ctx, w)
		if err != nil {
			t.Fatalf("RestoreStash %d: %v", i, err)
		}
		if want := []string{"a.txt", "plan-writes.txt"}; !equalStrings(overlap, want) {
			t.Errorf("overlap %v, want %v", overlap, want)
		}
	}
	got := treeSnapshot(t, f.dir)
	want := maps.Clone(wantTree)
	want["run-only.txt"] = "file:run\n"
	if !maps.Equal(got, want) {
		t.Errorf("work tree after restore:\n%v\nwant\n%v", got, want)
	}
	if got := f.git("diff", "--cached"); got != wantCached {
		t.Errorf("staged changes after restore:\n%s\nwant\n%s", got, wantCached)
	}
	if f.head() != runHead {
		t.Errorf("HEAD moved")
	}
	// The porcelain differs from the start only where the run committed.
	p := strings.Join(f.porcelain(), "\n")
	for _, l := range wantPorcelain {
		if strings.Contains(l, "plan-writes.txt") || strings.Contains(l, "a.txt") {
			continue
		}
		if !strings.Contains(p, l) {
			t.Errorf("status lacks %q:\n%s", l, p)
		}
	}
	if err := f.repo.DropStash(f.ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := gitMayFail(f.dir, "rev-parse", "--verify", "-q", StashRefPrefix+"r-1"); err == nil {
		t.Errorf("ref still there after DropStash")
	}
}

func TestStashOfACleanTreeIsNothing(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.commit("start")
	f.write("x.log", "ignored?\n")
	f.write(".git/info/exclude", "*.log\n")
	if w, err := f.repo.Stash(f.ctx, "r-1", nil); err != nil || w != "" {
		t.Fatalf("Stash of a clean tree: %q, %v", w, err)
	}
}

// Issue 23 item 8f: a rescue's commits are dated when the rescue
// happened, not one second after HEAD; with no time given they are
// dated as Stash's.
func TestRescueIsDatedWhenItHappened(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.commit("start")
	headDate := strings.TrimSpace(f.git("log", "-1", "--format=%ct", "HEAD"))
	f.write("a.txt", "a, the user's edit\n")
	when := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	w, err := f.repo.Rescue(f.ctx, "r-1/p1-a1", nil, "", when)
	if err != nil || w == "" {
		t.Fatalf("Rescue: %q, %v", w, err)
	}
	for _, rev := range []string{w, w + "^2"} { // the work tree's commit and the index's
		got := strings.TrimSpace(f.git("log", "-1", "--format=%ct %at", rev))
		want := fmt.Sprintf("%d %d", when.Unix(), when.Unix())
		if got != want {
			t.Errorf("%s is dated %s, want %s (HEAD is %s)", rev, got, want, headDate)
		}
	}
	if got := strings.TrimSpace(f.git("show", w+":a.txt")); got != "a, the user's edit" {
		t.Errorf("the rescue holds a.txt = %q", got)
	}
	// No time: one second after HEAD, the same changes the same commit.
	w2, err := f.repo.Rescue(f.ctx, "r-1/p1-a2", nil, "", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var hd int64
	fmt.Sscan(headDate, &hd)
	if got := strings.TrimSpace(f.git("log", "-1", "--format=%ct", w2)); got != fmt.Sprint(hd+1) {
		t.Errorf("undated rescue at %s, want HEAD's %d + 1", got, hd)
	}
}
