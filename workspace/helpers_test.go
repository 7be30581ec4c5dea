package workspace

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// testAuthor signs the tests' commits, so they need no git identity.
var testAuthor = Signature{Name: "Test Author", Email: "test@example.com"}

// hermetic isolates the test from the machine's git configuration: HOME,
// XDG_CONFIG_HOME and GIT_CONFIG_GLOBAL point into a temp dir, the system
// config is off and identity variables are unset. It returns the home.
func hermetic(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "global.gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES",
	} {
		unsetenv(t, k)
	}
	return home
}

func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "") // restores the old value after the test
	os.Unsetenv(k)
}

// fixture is a real repository in a temp dir, made with go-git.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	repo *Repo
	tick int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	hermetic(t)
	dir := t.TempDir()
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: context.Background(), dir: dir, repo: r}
}

func (f *fixture) abs(rel string) string { return filepath.Join(f.dir, filepath.FromSlash(rel)) }

func (f *fixture) write(rel, content string) { f.writeMode(rel, content, 0o644) }

func (f *fixture) writeMode(rel, content string, perm os.FileMode) {
	f.t.Helper()
	p := f.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		f.remove(rel) // write the file, not through the link
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) symlink(rel, target string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(f.abs(rel)), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, f.abs(rel)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(f.abs(rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) exists(rel string) bool {
	_, err := os.Lstat(f.abs(rel))
	return err == nil
}

func (f *fixture) remove(rel string) {
	f.t.Helper()
	if err := os.RemoveAll(f.abs(rel)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) chmod(rel string, perm os.FileMode) {
	f.t.Helper()
	if err := os.Chmod(f.abs(rel), perm); err != nil {
		f.t.Fatal(err)
	}
}

// commit commits everything with the test author and a fixed, advancing
// clock.
func (f *fixture) commit(msg string, trailers ...Trailer) string {
	f.t.Helper()
	return f.commitOpts(msg, trailers, CommitOptions{})
}

func (f *fixture) commitOpts(msg string, trailers []Trailer, opts CommitOptions) string {
	f.t.Helper()
	if opts.Author.IsZero() {
		opts.Author = testAuthor
	}
	if opts.When.IsZero() {
		f.tick++
		opts.When = time.Date(2026, 1, 2, 3, 4, f.tick, 0, time.UTC)
	}
	h, err := f.repo.Commit(f.ctx, msg, trailers, opts)
	if err != nil {
		f.t.Fatalf("Commit(%q): %v", msg, err)
	}
	return h
}

func (f *fixture) head() string {
	f.t.Helper()
	h, err := f.repo.Head(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

func (f *fixture) status() Status {
	f.t.Helper()
	st, err := f.repo.Status(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// git runs the real git command in the fixture and returns its output.
func (f *fixture) git(args ...string) string {
	f.t.Helper()
	return runGit(f.t, f.dir, args...)
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "user.name=Git CLI", "-c", "user.email=cli@example.com", "-c", "core.quotePath=false"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// porcelain is `git status --porcelain -uall`, one line per path.
func (f *fixture) porcelain() []string {
	f.t.Helper()
	out := strings.TrimRight(f.git("status", "--porcelain=v1", "--untracked-files=all", "--no-renames"), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// files lists every file and symbolic link under dir (except .git) with a
// description of its content and mode, for comparing two trees.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			kind := "file:"
			if fi.Mode()&0o100 != 0 {
				kind = "exec:"
			}
			out[rel] = kind + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	l := strings.Split(s, "\n")
	sort.Strings(l)
	return l
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gitMayFail runs git and returns its output and error without failing.
func gitMayFail(dir string, args ...string) (string, error) {
	full := append([]string{"-c", "user.name=Git CLI", "-c", "user.email=cli@example.com"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
