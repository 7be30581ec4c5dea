package workspace

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestStatusOutsideIsStatusLessSkip checks StatusOutside against the naive
// version: Status with what is under skip filtered out; and that nothing
// under skip is stat'ed or listed.
func TestStatusOutsideIsStatusLessSkip(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.write("exec/p1/s.md", "one\n")
	f.write("exec/p2/s.md", "two\n")
	f.write("keep.txt", "k\n")
	f.commit("base")
	f.write("a.txt", "changed\n")
	f.write("exec/p1/s.md", "edited\n")
	f.remove("exec/p2/s.md")
	f.write("exec/new.md", "new\n")
	f.write("keep.txt", "changed too\n")
	f.write("loose.txt", "untracked\n")
	ctx := context.Background()
	skip := []string{"exec", "keep.txt"}
	all, err := f.repo.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := f.repo.IOCounts()
	got, err := f.repo.StatusOutside(ctx, skip)
	if err != nil {
		t.Fatal(err)
	}
	work := f.repo.IOCounts().Sub(before)
	drop := func(ps []string) []string {
		return slices.DeleteFunc(slices.Clone(ps), func(p string) bool { return p == "keep.txt" || strings.HasPrefix(p, "exec/") })
	}
	want := Status{Modified: drop(all.Modified), Added: drop(all.Added), Deleted: drop(all.Deleted), Untracked: drop(all.Untracked)}
	if got.String() != want.String() {
		t.Fatalf("StatusOutside:\n%s\nwant:\n%s", got, want)
	}
	if work.Dirs != 1 || work.Stats != 1 { // the root; a.txt
		t.Errorf("StatusOutside did %+v, want the root listed and a.txt stat'ed only", work)
	}
	u, err := f.repo.UntrackedOutside(ctx, skip)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(u, []string{"loose.txt"}) {
		t.Errorf("UntrackedOutside = %q, want [loose.txt]", u)
	}
}

// TestTreesAreReadOnce checks that a Repo reads a tree object once: a
// second Status reads none, and one after a commit that changed one
// directory reads only the trees on its path.
func TestTreesAreReadOnce(t *testing.T) {
	f := newFixture(t)
	for _, d := range []string{"x/1", "x/2", "x/3", "y"} {
		f.write(d+"/f.txt", d+"\n")
	}
	f.commit("base")
	ctx := context.Background()
	trees := func() int64 {
		before := f.repo.IOCounts()
		if _, err := f.repo.Status(ctx); err != nil {
			t.Fatal(err)
		}
		return f.repo.IOCounts().Sub(before).Trees
	}
	trees()
	if n := trees(); n != 0 {
		t.Errorf("second Status read %d trees, want 0", n)
	}
	f.write("x/2/f.txt", "changed\n")
	f.commit("change x/2")
	if n := trees(); n > 3 { // the root, x, x/2 (Commit may have read them)
		t.Errorf("Status after a change in x/2 read %d trees, want at most 3", n)
	}
	if st := f.status(); !st.IsClean() {
		t.Errorf("status after commit: %s", st)
	}
}
