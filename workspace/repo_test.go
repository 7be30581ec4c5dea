package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenRefusesWhatIsNotAWorkTreeRoot(t *testing.T) {
	hermetic(t)
	plain := t.TempDir()
	_, err := Open(plain)
	var nr *NotRepoError
	if !errors.Is(err, ErrNotRepo) || !errors.As(err, &nr) || !strings.Contains(err.Error(), plain+" is not a git repository (run git init)") {
		t.Fatalf("Open(plain dir) = %v", err)
	}

	f := newFixture(t)
	sub := filepath.Join(f.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Open(sub)
	if !errors.As(err, &nr) || nr.Root != f.dir || !strings.Contains(err.Error(), "the root is "+f.dir) {
		t.Fatalf("Open(subdir) = %v", err)
	}

	bare := t.TempDir()
	runGit(t, bare, "init", "-q", "--bare")
	if _, err := Open(bare); !errors.As(err, &nr) || !nr.Bare {
		t.Fatalf("Open(bare) = %v", err)
	}
	if _, err := Open(filepath.Join(plain, "missing")); err == nil {
		t.Fatal("Open(missing dir) succeeded")
	}
}

func TestInitAndRoot(t *testing.T) {
	hermetic(t)
	dir := filepath.Join(t.TempDir(), "new")
	r, err := Init(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Root() != dir {
		t.Fatalf("Root = %s, want %s", r.Root(), dir)
	}
	if got := strings.TrimSpace(runGit(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Fatalf("HEAD -> %s", got)
	}
	if _, err := Init(dir, "main"); err == nil {
		t.Fatal("Init over a repository succeeded")
	}
}

func TestAuthorFallbacks(t *testing.T) {
	f := newFixture(t)
	home := os.Getenv("HOME")

	if got := f.repo.Author(); got != (Signature{"gaffer", "gaffer@localhost"}) {
		t.Fatalf("no config: Author = %v", got)
	}
	// The global config file named by GIT_CONFIG_GLOBAL.
	global := os.Getenv("GIT_CONFIG_GLOBAL")
	if err := os.WriteFile(global, []byte("[user]\n\tname = Global Name\n\temail = global@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := f.repo.Author(); got != (Signature{"Global Name", "global@example.com"}) {
		t.Fatalf("global config: Author = %v", got)
	}
	// ~/.gitconfig when GIT_CONFIG_GLOBAL is not set.
	unsetenv(t, "GIT_CONFIG_GLOBAL")
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Home Name\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := f.repo.Author(); got != (Signature{"Home Name", "gaffer@localhost"}) {
		t.Fatalf("~/.gitconfig: Author = %v", got)
	}
	// The repository's config wins, key by key.
	f.git("config", "user.email", "repo@example.com")
	if got := f.repo.Author(); got != (Signature{"Home Name", "repo@example.com"}) {
		t.Fatalf("repo config: Author = %v", got)
	}
	// The environment wins over everything.
	t.Setenv("GIT_AUTHOR_NAME", "Env Name")
	if got := f.repo.Author(); got != (Signature{"Env Name", "repo@example.com"}) {
		t.Fatalf("environment: Author = %v", got)
	}

	// Commit uses Author() when CommitOptions.Author is zero.
	f.write("a.txt", "a\n")
	if _, err := f.repo.Commit(f.ctx, "by config", nil, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(f.git("log", "-1", "--format=%an <%ae>")); got != "Env Name <repo@example.com>" {
		t.Fatalf("commit author = %q", got)
	}
}

func TestLinkedWorktree(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	wt := filepath.Join(t.TempDir(), "wt")
	f.git("worktree", "add", "-q", "-b", "feature", wt)
	r, err := Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(wt, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := []string{}
	h, err := r.Commit(ctx, "on feature", nil, CommitOptions{Author: testAuthor})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(f.git("rev-parse", "feature")); got != h {
		t.Fatalf("feature = %s, want %s", got, h)
	}
	if got := strings.TrimSpace(f.git("rev-parse", "main")); got != base {
		t.Fatal("main moved")
	}
	if err := r.ResetTo(ctx, base, keep); err != nil {
		t.Fatal(err)
	}
	if out := runGit(t, wt, "status", "--porcelain"); out != "" {
		t.Fatalf("worktree status after reset = %q", out)
	}
	if _, err := os.Stat(filepath.Join(wt, "b.txt")); !os.IsNotExist(err) {
		t.Fatal("b.txt survived the reset")
	}
}

func TestConcurrentUse(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.commit("base")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				if _, err := f.repo.Status(f.ctx); err != nil {
					t.Error(err)
				}
			} else if _, err := f.repo.Head(f.ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestCancelledContext(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.repo.Status(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Status = %v", err)
	}
	if err := f.repo.ResetTo(ctx, "HEAD", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ResetTo = %v", err)
	}
}

func TestMergeConflictIndex(t *testing.T) {
	f := newFixture(t)
	f.write("c.txt", "base\n")
	base := f.commit("base")
	f.git("checkout", "-q", "-b", "other")
	f.write("c.txt", "other\n")
	f.commit("other")
	f.git("checkout", "-q", "main")
	f.write("c.txt", "main\n")
	f.commit("main")
	cmd := []string{"merge", "-q", "other"}
	if out, err := gitMayFail(f.dir, cmd...); err == nil {
		t.Fatalf("merge did not conflict: %s", out)
	}
	st := f.status()
	if !equalStrings(st.Modified, []string{"c.txt"}) {
		t.Fatalf("status of a conflict = %+v", st)
	}
	if err := f.repo.ResetTo(f.ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	if f.read("c.txt") != "base\n" || len(f.porcelain()) != 0 {
		t.Fatalf("after reset: %q %q", f.read("c.txt"), f.porcelain())
	}
	if f.exists(".git/MERGE_HEAD") {
		t.Fatal("the merge in progress survived the reset")
	}
}

// TestObjectsPackedBehindOurBack: a git command that packs objects (gc,
// or an agent's commit triggering auto-gc) while a Repo is open must not
// make objects look missing.
func TestObjectsPackedBehindOurBack(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	a := f.commit("a")
	f.write("b.txt", "b\n")
	b := f.commit("b")
	if _, err := f.repo.DiffStat(f.ctx, a, b); err != nil { // go-git lists the packs now
		t.Fatal(err)
	}
	f.git("gc", "-q", "--prune=now")
	f.write("c.txt", "c\n")
	if st := f.status(); !equalStrings(st.Untracked, []string{"c.txt"}) {
		t.Fatalf("Status after gc = %+v", st)
	}
	if _, err := f.repo.DiffStat(f.ctx, a, b); err != nil {
		t.Fatalf("DiffStat after gc: %v", err)
	}
	if err := f.repo.ResetTo(f.ctx, a, nil); err != nil {
		t.Fatalf("ResetTo after gc: %v", err)
	}
	if f.exists("b.txt") || f.exists("c.txt") || f.read("a.txt") != "a\n" {
		t.Fatal("ResetTo after gc did not reset")
	}
}

func TestBranch(t *testing.T) {
	f := newFixture(t)
	if b, err := f.repo.Branch(f.ctx); err != nil || b != "main" {
		t.Fatalf("Branch on unborn main = %q, %v", b, err)
	}
	f.write("a.txt", "a\n")
	h := f.commit("a")
	f.git("checkout", "-q", "-b", "feature/x")
	if b, _ := f.repo.Branch(f.ctx); b != "feature/x" {
		t.Fatalf("Branch = %q", b)
	}
	f.git("checkout", "-q", "--detach", h)
	if b, _ := f.repo.Branch(f.ctx); b != "" {
		t.Fatalf("Branch when detached = %q", b)
	}
	// Commit and ResetTo work on a detached HEAD too.
	f.write("b.txt", "b\n")
	c := f.commit("b")
	if got := strings.TrimSpace(f.git("rev-parse", "HEAD")); got != c {
		t.Fatalf("detached HEAD = %s, want %s", got, c)
	}
	if err := f.repo.ResetTo(f.ctx, h, nil); err != nil {
		t.Fatal(err)
	}
	if f.head() != h || f.exists("b.txt") {
		t.Fatal("ResetTo on a detached HEAD")
	}
}
