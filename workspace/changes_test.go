package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEveryKindOfChangeIsSeenAndCommitted: on a tree large enough that
// stats are preloaded (preloadMin), with the Repo's decoded index and
// HEAD kept from the call before, a phase's change is seen by Status and
// committed by Commit whatever made it: a tool's write, a child process,
// a rename, a mode change, a symbolic link made, retargeted or replacing
// a file, a deletion, a file replaced by a directory, an edit that keeps
// the size, and the git command itself changing the index and HEAD
// between two calls. What Commit stores is what `git status` and `git
// ls-tree` see, checked with the git binary.
func TestEveryKindOfChangeIsSeenAndCommitted(t *testing.T) {
	f := newFixture(t)
	n := preloadMin + 200
	for i := range n {
		f.write(fmt.Sprintf("d%02d/f%04d.txt", i/50, i), fmt.Sprintf("file %d\n", i))
	}
	f.write("tool.txt", "before\n")
	f.write("child.txt", "before\n")
	f.write("old-name.txt", "renamed\n")
	f.write("script.sh", "#!/bin/sh\n")
	f.write("same-size.txt", "aaaa\n")
	f.write("gone.txt", "x\n")
	f.write("becomes-dir", "x\n")
	f.write("becomes-link.txt", "x\n")
	f.symlink("link", "tool.txt")
	f.commit("base")
	if st := f.status(); !st.IsClean() { // the Repo keeps HEAD and the index from here
		t.Fatalf("status after commit:\n%s", st)
	}

	f.write("tool.txt", "written by a tool\n")
	sh := exec.Command("sh", "-c", "printf 'by a child\\n' > child.txt && printf 'new\\n' > d03/from-child.txt")
	sh.Dir = f.dir
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if err := os.Rename(f.abs("old-name.txt"), f.abs("d07/new-name.txt")); err != nil {
		t.Fatal(err)
	}
	f.chmod("script.sh", 0o755)
	fi, err := os.Stat(f.abs("same-size.txt"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a change time that differs
	f.write("same-size.txt", "bbbb\n")
	if err := os.Chtimes(f.abs("same-size.txt"), fi.ModTime(), fi.ModTime()); err != nil { // size and mtime as before
		t.Fatal(err)
	}
	f.remove("gone.txt")
	f.remove("becomes-dir")
	f.write("becomes-dir/inside.txt", "now a directory\n")
	f.remove("becomes-link.txt")
	f.symlink("becomes-link.txt", "tool.txt")
	f.remove("link")
	f.symlink("link", "child.txt")
	f.symlink("d05/new-link", "../tool.txt")
	f.write(fmt.Sprintf("d%02d/f%04d.txt", 10, 500), "edited deep in the tree\n")

	want := Status{
		Modified:  []string{"becomes-link.txt", "child.txt", "d10/f0500.txt", "link", "same-size.txt", "script.sh", "tool.txt"},
		Deleted:   []string{"becomes-dir", "gone.txt", "old-name.txt"},
		Untracked: []string{"becomes-dir/inside.txt", "d03/from-child.txt", "d05/new-link", "d07/new-name.txt"},
	}
	// same-size.txt keeps its size and modification time: its change
	// time gives it away, as it does to git.
	if st := f.status(); st.String() != want.String() {
		t.Fatalf("Status:\n%s\nwant:\n%s", f.status(), want)
	}

	f.commit("phase")
	if p := f.porcelain(); len(p) != 0 {
		t.Fatalf("git status after Commit:\n%s", strings.Join(p, "\n"))
	}
	tree := f.git("ls-tree", "-r", "HEAD")
	for _, w := range []string{
		"100755 blob", // script.sh's mode
		"120000 blob",
	} {
		if !strings.Contains(tree, w) {
			t.Errorf("ls-tree HEAD has no %q:\n%s", w, tree)
		}
	}
	for path, content := range map[string]string{
		"tool.txt": "written by a tool\n", "child.txt": "by a child\n", "d03/from-child.txt": "new\n",
		"d07/new-name.txt": "renamed\n", "becomes-dir/inside.txt": "now a directory\n",
		"link": "child.txt", "becomes-link.txt": "tool.txt", "d05/new-link": "../tool.txt",
		"d10/f0500.txt": "edited deep in the tree\n",
	} {
		if got := f.git("show", "HEAD:"+path); got != content {
			t.Errorf("HEAD:%s = %q, want %q", path, got, content)
		}
	}
	for _, p := range []string{"gone.txt", "old-name.txt", "becomes-dir"} {
		if strings.Contains(tree, "\t"+p+"\n") {
			t.Errorf("HEAD still has %s", p)
		}
	}

	// The git command changes the index and HEAD between two calls on
	// the same Repo: the kept snapshot must not hide either.
	f.write("by-git.txt", "added by git\n")
	f.git("add", "by-git.txt")
	if st := f.status(); !slices.Equal(st.Added, []string{"by-git.txt"}) {
		t.Fatalf("after git add: %s", st)
	}
	f.git("commit", "-q", "-m", "by git")
	if st := f.status(); !st.IsClean() {
		t.Fatalf("after git commit:\n%s", st)
	}
	f.git("rm", "-q", "--cached", "by-git.txt")
	if st := f.status(); !slices.Equal(st.Deleted, []string{"by-git.txt"}) || !slices.Equal(st.Untracked, []string{"by-git.txt"}) {
		t.Fatalf("after git rm --cached: %s", st)
	}
}
