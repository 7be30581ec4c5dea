package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckoutNewBranch switches the work tree to a new branch at an
// older commit, keeping the untracked file it is told to keep, and
// refuses a branch name that is taken.
func TestCheckoutNewBranch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := Init(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n")
	first, err := r.Commit(ctx, "one", nil, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write("a.txt", "two\n")
	write("b.txt", "new\n")
	second, err := r.Commit(ctx, "two", nil, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write("mine.txt", "untracked\n")
	if err := r.CheckoutNewBranch(ctx, "gaffer/r-1", first, []string{"mine.txt"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := r.Branch(ctx); b != "gaffer/r-1" {
		t.Fatalf("on branch %q", b)
	}
	if h, _ := r.Head(ctx); h != first {
		t.Fatalf("HEAD %s, want %s", h, first)
	}
	for name, want := range map[string]string{"a.txt": "one\n", "mine.txt": "untracked\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Fatalf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt of the later commit is still there: %v", err)
	}
	if st, _ := r.Status(ctx); len(st.Modified)+len(st.Added)+len(st.Deleted) != 0 || len(st.Untracked) != 1 {
		t.Fatalf("status after the checkout:\n%s", st)
	}
	if h, _, err := r.FindCommit(ctx, "main", func(string, []Trailer) bool { return true }, 1); err != nil || h != second {
		t.Fatalf("main moved: %s, %v", h, err)
	}
	if err := r.CheckoutNewBranch(ctx, "main", first, nil); !errors.Is(err, ErrBranchExists) {
		t.Fatalf("a taken name: %v, want ErrBranchExists", err)
	}
}
