package workspace

import (
	"maps"
	"slices"
	"testing"
)

// TestUnmergedNamesRunBranchesWithWork: Unmerged lists the gaffer/
// branches with commits HEAD lacks, and neither one at HEAD's history nor
// a branch outside the prefix; after a merge the branch is gone from it.
// A repository without commits has none.
func TestUnmergedNamesRunBranchesWithWork(t *testing.T) {
	f := newFixture(t)
	mergeIdentity(t)
	// A repository without commits has no branch with work HEAD lacks.
	for _, p := range []string{"gaffer/", "gaffer/r1"} {
		if got, err := f.repo.Unmerged(f.ctx, p); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("Unmerged(%q) without commits = %v, %v; want none", p, got, err)
		}
	}
	f.write("a.go", "package a\n")
	f.commit("initial")
	f.git("branch", "gaffer/empty") // no commit of its own
	f.runBranch("a.go", "package a // run\n")
	f.git("checkout", "-q", "-b", "feature")
	f.write("b.go", "package a // feature\n")
	f.commit("feature")
	f.git("checkout", "-q", "main")

	got, err := f.repo.Unmerged(f.ctx, "gaffer/")
	if err != nil || !slices.Equal(slices.Sorted(maps.Keys(got)), []string{"gaffer/r1"}) {
		t.Fatalf("Unmerged = %v, %v; want gaffer/r1 only", got, err)
	}
	// One branch, asked alone.
	for b, want := range map[string]bool{"gaffer/r1": true, "gaffer/empty": false, "gaffer/none": false, "feature": true} {
		got, err := f.repo.Unmerged(f.ctx, b)
		if err != nil || got[b] != want || len(got) > 1 {
			t.Errorf("Unmerged(%q) = %v, %v; want %v", b, got, err, want)
		}
	}
	if _, err := f.repo.MergeBranch(f.ctx, "gaffer/r1", "merge"); err != nil {
		t.Fatal(err)
	}
	if got, err := f.repo.Unmerged(f.ctx, "gaffer/"); err != nil || len(got) != 0 {
		t.Fatalf("Unmerged after the merge = %v, %v", got, err)
	}
	if got, err := f.repo.Unmerged(f.ctx, "gaffer/r1"); err != nil || len(got) != 0 {
		t.Fatalf("Unmerged(gaffer/r1) after the merge = %v, %v", got, err)
	}
}
