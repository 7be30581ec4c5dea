package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMirrorKeepsBorrowedObjects: a run's clone borrows the mirror's
// objects (clone --reference). Once the run's branch is deleted on the
// remote and the mirror fetched with --prune, a gc of the mirror (git
// fetch runs gc --auto) must not delete the objects the clone borrowed,
// even where the user's git config prunes at once.
func TestMirrorKeepsBorrowedObjects(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	gitT := func(dir string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	work, remote := filepath.Join(root, "work"), filepath.Join(root, "remote.git")
	gitT(root, nil, "init", "-q", "-b", "main", work)
	gitT(work, nil, "commit", "-q", "--allow-empty", "-m", "base")
	gitT(work, nil, "checkout", "-q", "-b", "gaffer/r-1")
	if err := os.WriteFile(filepath.Join(work, "f"), []byte("the run's work\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitT(work, nil, "add", "f")
	gitT(work, nil, "commit", "-q", "-m", "phase 1")
	gitT(root, nil, "clone", "-q", "--bare", work, remote)

	// A file:// URL, as a remote on another machine: the clone borrows
	// the mirror's objects instead of copying the remote's.
	m := NewMirror("file://"+remote, filepath.Join(root, "gaffer.mirror"))
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(root, "clone")
	if err := m.Clone(ctx, clone, "gaffer/r-1"); err != nil {
		t.Fatal(err)
	}
	gitT(remote, nil, "branch", "-D", "gaffer/r-1")
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if m.Tip(ctx, "gaffer/r-1") != "" {
		t.Fatal("the mirror kept the branch deleted on the remote")
	}
	prune := filepath.Join(root, "gitconfig")
	if err := os.WriteFile(prune, []byte("[gc]\n\tpruneExpire = now\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitT(m.Path, []string{"GIT_CONFIG_GLOBAL=" + prune}, "gc", "--quiet")
	gitT(clone, nil, "fsck", "--full", "--no-dangling")
	if got := gitT(clone, nil, "show", "HEAD:f"); got != "the run's work" {
		t.Errorf("the clone's file: %q", got)
	}
}
