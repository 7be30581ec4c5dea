package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/gaffer-dev/gaffer/internal/inputfile"
)

// Repo is a git work tree and its repository. Its methods serialise on a
// mutex, so one Repo may be shared by goroutines; other processes (the git
// command, an agent) may change the same repository between calls, and
// every call reads the current state from disk.
type Repo struct {
	mu        sync.Mutex
	root      string // absolute work tree root
	gitDir    string // HEAD and index live here
	commonDir string // objects, refs and config live here; gitDir except in linked worktrees
	repo      *git.Repository
	now       func() time.Time
	// fault, when set by a test, is called at named points between the
	// steps of a commit or a reset; an error stops the operation there,
	// as a crash would.
	fault func(point string) error
	// counts is the work done (IOCounts); trees caches tree objects read.
	counts ioCounts
	trees  treeCache
	// snaps keeps the last snapshot's decoded HEAD and index.
	snaps snapCache
}

// at calls the fault hook.
func (r *Repo) at(point string) error {
	if r.fault == nil {
		return nil
	}
	return r.fault(point)
}

// Open opens the git work tree whose root is dir. A directory inside a
// work tree is refused rather than silently widened to the enclosing
// repository (gaffer commits and resets: it must work on the repository
// the user named), and so is a bare repository; the error is a
// *NotRepoError saying which case it is. Linked worktrees (`git worktree
// add`) are supported.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	if !fi.IsDir() {
		return nil, &NotRepoError{Dir: abs}
	}
	gitDir, commonDir, err := findGitDir(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notRepo(abs)
		}
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	repo, err := openGit(abs, gitDir, commonDir)
	if err != nil {
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, notRepo(abs)
		}
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	return &Repo{root: abs, gitDir: gitDir, commonDir: commonDir, repo: repo, now: time.Now}, nil
}

// Init creates a git repository in dir (creating dir if needed) whose
// first branch is named branch ("main" when empty), and opens it. It
// fails if dir already holds a repository.
func Init(dir, branch string) (*Repo, error) {
	if branch == "" {
		branch = "main"
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, &Error{Op: "init", Path: dir, Err: err}
	}
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)},
	})
	if err != nil {
		return nil, &Error{Op: "init", Path: dir, Err: err}
	}
	return Open(dir)
}

// notRepo builds the error for a directory with no .git, naming the
// enclosing work tree or bare repository when there is one.
func notRepo(abs string) error {
	e := &NotRepoError{Dir: abs}
	if isBareRepo(abs) {
		e.Bare = true
		return e
	}
	for d := filepath.Dir(abs); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			e.Root = d
			break
		}
	}
	return e
}

func isBareRepo(dir string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// findGitDir locates the git directory of the work tree at root: root/.git,
// or the directory a .git file points to. commonDir is where a linked
// worktree's shared objects, refs and config live.
// objectCacheSize bounds the objects go-git keeps once read. Its default
// (96 MiB) filled up over a long run with every phase's execution state
// and trees, none read again; the trees gaffer does read again it keeps
// itself, by hash.
const objectCacheSize = 8 * cache.MiByte

// openGit opens the repository whose work tree is root, as
// git.PlainOpenWithOptions does with EnableDotGitCommonDir (a linked work
// tree's objects and refs are its common directory's), with a bounded
// object cache.
func openGit(root, gitDir, commonDir string) (*git.Repository, error) {
	if _, err := os.Stat(gitDir); errors.Is(err, fs.ErrNotExist) {
		return nil, git.ErrRepositoryNotExists
	}
	var common billy.Filesystem
	if commonDir != gitDir {
		common = osfs.New(commonDir)
	}
	dot := dotgit.NewRepositoryFilesystem(osfs.New(gitDir), common)
	return git.Open(filesystem.NewStorage(dot, cache.NewObjectLRU(objectCacheSize)), osfs.New(root))
}

// GitDir returns the git directory of the work tree at root without
// opening the repository: root/.git, or the directory a .git file points
// to in a linked work tree ("gitdir: …"). Where root has no readable
// gitdir file (missing, a directory, no "gitdir:" line) it is root/.git:
// the commands that need the repository say what is wrong when they open it.
func GitDir(root string) string {
	if gitDir, _, err := findGitDir(root); err == nil {
		return gitDir
	}
	return filepath.Join(root, ".git")
}

func findGitDir(root string) (gitDir, commonDir string, err error) {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		return "", "", err
	}
	gitDir = dotGit
	if !fi.IsDir() {
		b, err := inputfile.Read(dotGit, 64<<10, inputfile.Options{})
		if err != nil {
			return "", "", err
		}
		line := strings.TrimSpace(string(b))
		target, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return "", "", fmt.Errorf("%s: not a gitdir file", dotGit)
		}
		gitDir = absFrom(root, strings.TrimSpace(target))
	}
	commonDir = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = absFrom(gitDir, strings.TrimSpace(string(b)))
	}
	return gitDir, commonDir, nil
}

func absFrom(base, p string) string {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// Root returns the absolute path of the work tree's root.
func (r *Repo) Root() string { return r.root }

// Head returns the full hash of the commit HEAD points to. On a branch with
// no commits yet it returns an error matching ErrNoCommits.
func (r *Repo) Head(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.head()
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// Branch returns the short name of the branch HEAD points to ("main"),
// also when it has no commits yet, or "" when HEAD is detached. ResetTo and
// Commit move whatever branch HEAD points to when they run, so a workflow
// that must stay on one branch compares Branch before and after a phase
// (an agent may have switched branches).
func (r *Repo) Branch(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", &Error{Op: "read", Path: "HEAD", Err: err}
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", nil
	}
	return ref.Target().Short(), nil
}

// retry runs an operation again, once, after a missing object: go-git
// loads the list of pack files once, so a `git gc` or a git command that
// packed objects since then hides them until the list is reloaded.
func retry[T any](r *Repo, op func() (T, error)) (T, error) {
	v, err := op()
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if s, ok := r.repo.Storer.(interface{ Reindex() }); ok {
			s.Reindex()
			return op()
		}
	}
	return v, err
}

// head resolves HEAD, failing with ErrNoCommits on an unborn branch.
func (r *Repo) head() (plumbing.Hash, error) {
	h, ok, err := r.headOrZero()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("%w (branch %s is unborn: make a first commit)", ErrNoCommits, r.branchName())
	}
	return h, nil
}

// headOrZero resolves HEAD; ok is false on an unborn branch.
func (r *Repo) headOrZero() (h plumbing.Hash, ok bool, err error) {
	ref, err := r.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, &Error{Op: "read", Path: "HEAD", Err: err}
	}
	return ref.Hash(), true, nil
}

// branchName is the short name of the branch HEAD points to, or "HEAD"
// when it is detached.
func (r *Repo) branchName() string {
	ref, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil || ref.Type() != plumbing.SymbolicReference {
		return "HEAD"
	}
	return ref.Target().Short()
}

// resolve resolves a revision (a full or abbreviated hash, HEAD, a branch or
// tag, HEAD~2, ...) to a commit.
func (r *Repo) resolve(rev string) (*object.Commit, error) {
	if rev == "HEAD" {
		h, err := r.head()
		if err != nil {
			return nil, err
		}
		return r.commitObject(rev, h)
	}
	if rev == "" {
		return nil, fmt.Errorf("%w: empty revision", ErrUnknownRevision)
	}
	var h plumbing.Hash
	if plumbing.IsHash(rev) {
		h = plumbing.NewHash(rev)
	} else {
		hp, err := r.repo.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrUnknownRevision, rev, err)
		}
		h = *hp
	}
	return r.commitObject(rev, h)
}

func (r *Repo) commitObject(rev string, h plumbing.Hash) (*object.Commit, error) {
	c, err := r.repo.CommitObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownRevision, rev, err)
	}
	if err != nil {
		return nil, &Error{Op: "read commit", Path: rev, Err: err}
	}
	return c, nil
}
