package workspace

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// A failed attempt is kept as one commit on HEAD under its ref, whose
// `git show` is the attempt's diff; HEAD, the index and the work tree
// are untouched, and excluded paths are kept as HEAD has them.
func TestKeepAttemptRecordsTheWorkTreeUnderItsRef(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.write("gone.txt", "g\n")
	head := f.commit("start")
	f.write("a.txt", "a, attempt 1\n")
	f.write("new.txt", "new\n")
	f.remove("gone.txt")
	f.write("notes.txt", "the user's\n")
	before, status := treeSnapshot(t, f.dir), f.porcelain()
	h, err := f.repo.KeepAttempt(f.ctx, "r-1/p2-a1", "gaffer: failed attempt 1 of phase 2\n", []string{"notes.txt"}, time.Time{})
	if err != nil || h == "" {
		t.Fatalf("KeepAttempt: %q, %v", h, err)
	}
	ref := AttemptRefPrefix + "r-1/p2-a1"
	if got := strings.TrimSpace(f.git("rev-parse", ref)); got != h {
		t.Fatalf("%s = %s, want %s", ref, got, h)
	}
	if got := strings.TrimSpace(f.git("rev-parse", ref+"^")); got != head {
		t.Fatalf("the attempt's parent is %s, want HEAD %s", got, head)
	}
	if got := sortedLines(f.git("show", "--format=", "--name-status", ref)); !slices.Equal(got, []string{"A\tnew.txt", "D\tgone.txt", "M\ta.txt"}) {
		t.Fatalf("git show %s: %q", ref, got)
	}
	if f.head() != head || !slices.Equal(f.porcelain(), status) || !maps.Equal(treeSnapshot(t, f.dir), before) {
		t.Fatal("KeepAttempt changed HEAD, the index or the work tree")
	}
	again, err := f.repo.KeepAttempt(f.ctx, "r-1/p2-a1", "gaffer: failed attempt 1 of phase 2\n", []string{"notes.txt"}, time.Time{})
	if err != nil || again != h {
		t.Fatalf("kept again: %q, %v; want the same commit %s", again, err, h)
	}
	f.write("a.txt", "a\n")
	f.write("gone.txt", "g\n")
	f.remove("new.txt")
	if h, err := f.repo.KeepAttempt(f.ctx, "r-1/p2-a2", "x\n", []string{"notes.txt"}, time.Time{}); err != nil || h != "" {
		t.Fatalf("an attempt that changed nothing: %q, %v", h, err)
	}
	if refs, err := f.repo.Refs(f.ctx, AttemptRefPrefix+"r-1/"); err != nil || !slices.Equal(refs, []string{ref}) {
		t.Fatalf("refs = %q, %v", refs, err)
	}
}
