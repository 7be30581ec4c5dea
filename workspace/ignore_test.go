package workspace

import (
	"strings"
	"testing"
)

// TestIgnorePatternsAgreeWithGit lays out files against a .gitignore with
// the common pattern forms and compares Untracked with git's untracked
// list.
func TestIgnorePatternsAgreeWithGit(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", strings.Join([]string{
		"# comment",
		"*.log",
		"!important.log",
		"/root-only.txt",
		"build/",
		"docs/*.tmp",
		"**/cache/",
		"a/**/z.txt",
		"*.[oa]",
		`\#hash.txt`,
		"trailing.txt   ",
		"dir-only/",
		"deep/nested/",
		"",
	}, "\r\n"))
	f.write("pkg/.gitignore", "local.txt\n!keep.log\n/anchored.txt\n")
	f.commit("rules")
	for _, p := range []string{
		"a.log", "important.log", "sub/b.log", "sub/important.log",
		"root-only.txt", "sub/root-only.txt",
		"build/x", "sub/build/y", "build.txt",
		"docs/x.tmp", "docs/sub/x.tmp", "x.tmp",
		"cache/c", "sub/cache/c", "cache.txt",
		"a/z.txt", "a/b/z.txt", "a/b/c/z.txt", "b/z.txt",
		"x.o", "x.a", "x.c",
		"#hash.txt", "trailing.txt",
		"dir-only/f", "sub/dir-only", // a file named like a dir-only pattern
		"deep/nested/f", "other/deep/nested/f",
		"pkg/local.txt", "pkg/sub/local.txt", "pkg/keep.log", "pkg/anchored.txt", "pkg/sub/anchored.txt", "local.txt",
	} {
		f.write(p, p+"\n")
	}
	var want []string
	for _, l := range f.porcelain() {
		want = append(want, strings.TrimPrefix(l, "?? "))
	}
	got, err := f.repo.Untracked(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStrings(got, want) {
		t.Fatalf("Untracked = %q\ngit says    %q", got, want)
	}
}
