package workspace

import (
	"errors"
	"strings"
	"testing"
)

// runBranch makes branch gaffer/r1 at HEAD with one commit changing path,
// as a run's work tree would, and returns to main.
func (f *fixture) runBranch(path, content string) string {
	f.t.Helper()
	f.git("checkout", "-q", "-b", "gaffer/r1")
	f.write(path, content)
	h := f.commit("phase 1")
	f.git("checkout", "-q", "main")
	return h
}

func mergeIdentity(t *testing.T) {
	t.Setenv("GIT_AUTHOR_NAME", "U")
	t.Setenv("GIT_AUTHOR_EMAIL", "u@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "U")
	t.Setenv("GIT_COMMITTER_EMAIL", "u@example.com")
}

func TestMergeBranchFastForwards(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "package a\n")
	base := f.commit("initial")
	tip := f.runBranch("a.go", "package a // run\n")

	p, err := f.repo.PlanMerge(f.ctx, "gaffer/r1")
	if err != nil {
		t.Fatal(err)
	}
	if !p.FastForward || p.Commits != 1 || p.Into != "main" || p.Head != base || p.Tip != tip {
		t.Fatalf("PlanMerge = %+v", p)
	}
	if f.head() != base {
		t.Fatal("PlanMerge moved HEAD")
	}
	p, err = f.repo.MergeBranch(f.ctx, "gaffer/r1", "merge")
	if err != nil {
		t.Fatal(err)
	}
	if f.head() != tip || p.Result != tip || f.read("a.go") != "package a // run\n" {
		t.Fatalf("after MergeBranch: HEAD %s (want %s), a.go %q", f.head(), tip, f.read("a.go"))
	}
	if p, err := f.repo.PlanMerge(f.ctx, "gaffer/r1"); err != nil || !p.UpToDate() {
		t.Fatalf("merged again: %+v, %v", p, err)
	}
	if ok, err := f.repo.BranchMerged(f.ctx, "gaffer/r1", "gaffer/"); err != nil || !ok {
		t.Fatalf("BranchMerged after the merge = %v, %v", ok, err)
	}
}

func TestMergeBranchMakesAMergeCommit(t *testing.T) {
	f := newFixture(t)
	mergeIdentity(t)
	f.write("a.go", "package a\n")
	f.commit("initial")
	tip := f.runBranch("a.go", "package a // run\n")
	if ok, err := f.repo.BranchMerged(f.ctx, "gaffer/r1", "gaffer/"); err != nil || ok {
		t.Fatalf("BranchMerged before the merge = %v, %v", ok, err)
	}
	f.write("b.go", "package a // mine\n")
	mine := f.commit("the user's own")

	p, err := f.repo.MergeBranch(f.ctx, "gaffer/r1", "Merge run r1")
	if err != nil {
		t.Fatal(err)
	}
	if p.FastForward || p.Commits != 1 {
		t.Fatalf("plan %+v", p)
	}
	parents := strings.Fields(f.git("log", "-1", "--format=%P"))
	if len(parents) != 2 || parents[0] != mine || parents[1] != tip {
		t.Fatalf("HEAD's parents %v, want [%s %s]", parents, mine, tip)
	}
	if msg := strings.TrimSpace(f.git("log", "-1", "--format=%s")); msg != "Merge run r1" {
		t.Fatalf("message %q", msg)
	}
}

func TestMergeBranchRefusesDirtyTreeAndConflict(t *testing.T) {
	f := newFixture(t)
	mergeIdentity(t)
	f.write("a.go", "package a\n")
	f.commit("initial")
	f.runBranch("a.go", "package a // run\n")

	f.write("a.go", "package a // my edit\n")
	_, err := f.repo.MergeBranch(f.ctx, "gaffer/r1", "m")
	var de *DirtyError
	if !errors.As(err, &de) || len(de.Paths) != 1 || de.Paths[0] != "a.go" {
		t.Fatalf("dirty: err %v", err)
	}
	if f.read("a.go") != "package a // my edit\n" {
		t.Fatal("the refused merge changed the user's edit")
	}

	f.commit("my edit")
	head := f.head()
	_, err = f.repo.MergeBranch(f.ctx, "gaffer/r1", "m")
	var ce *MergeConflictError
	if !errors.As(err, &ce) || len(ce.Paths) != 1 || ce.Paths[0] != "a.go" {
		t.Fatalf("conflict: err %v", err)
	}
	if f.head() != head || len(f.porcelain()) != 0 {
		t.Fatalf("the refused merge changed the checkout: HEAD %s, status %v", f.head(), f.porcelain())
	}
	if _, err := f.repo.PlanMerge(f.ctx, "gaffer/nope"); !errors.Is(err, ErrNoBranch) {
		t.Fatalf("missing branch: %v", err)
	}
}

func TestDeleteRefAndRefs(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "package a\n")
	h := f.commit("initial")
	f.git("branch", "gaffer/r1")
	f.git("update-ref", "refs/gaffer/rescue/r1/p1-a1", h)
	refs, err := f.repo.Refs(f.ctx, "refs/gaffer/rescue/r1/")
	if err != nil || len(refs) != 1 || refs[0] != "refs/gaffer/rescue/r1/p1-a1" {
		t.Fatalf("Refs = %v, %v", refs, err)
	}
	for _, r := range []string{"refs/heads/gaffer/r1", "refs/gaffer/rescue/r1/p1-a1", "refs/heads/gaffer/gone"} {
		if err := f.repo.DeleteRef(f.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if out := f.git("for-each-ref", "refs/heads/gaffer", "refs/gaffer"); out != "" {
		t.Fatalf("refs left: %s", out)
	}
}
