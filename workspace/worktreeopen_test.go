package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOpenWorkTreeIgnoresARewrittenGitFile: an agent points its work
// tree's .git at a repository of its own (with a commit of its own at
// HEAD). OpenWorkTree still opens the git directory git made for the
// tree, at the run's commit, and GitSettings names .git as changed with
// the blob that puts it back; Open, which follows the file, would work on
// the agent's repository.
func TestOpenWorkTreeIgnoresARewrittenGitFile(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	dir := filepath.Join(t.TempDir(), "wt", "r-1")
	if _, err := f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base); err != nil {
		t.Fatal(err)
	}
	wt, err := f.repo.OpenWorkTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := wt.GitSettings(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before[DotGitKey] == "" {
		t.Fatalf("GitSettings has no %s for a linked work tree: %v", DotGitKey, before)
	}
	made, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}

	evil := filepath.Join(dir, ".evil")
	runGit(t, dir, "init", "-q", evil)
	runGit(t, evil, "commit", "-q", "--allow-empty", "-m", "the agent's")
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+filepath.Join(evil, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	again, err := f.repo.OpenWorkTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := again.Head(f.ctx); err != nil || h != base {
		t.Errorf("OpenWorkTree: HEAD %s, %v; want the run's %s", h, err, base)
	}
	now, err := again.GitSettings(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ChangedSettings(before, now); !slices.Equal(got, []string{DotGitKey}) {
		t.Errorf("changed settings %q, want [%s]", got, DotGitKey)
	}
	if p := again.GitSettingsPath(DotGitKey); p != filepath.Join(dir, ".git") {
		t.Errorf("GitSettingsPath(%s) = %s", DotGitKey, p)
	}
	if got := f.git("cat-file", "-p", before[DotGitKey]); got != string(made) {
		t.Errorf("the recorded blob is %q, want the .git git made, %q", got, made)
	}
	if followed, err := Open(dir); err == nil {
		if h, _ := followed.Head(f.ctx); h == base {
			t.Errorf("Open followed the .git file to the run's repository too: the test proves nothing")
		}
	}
}
