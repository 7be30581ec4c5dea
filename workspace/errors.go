package workspace

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrNotRepo is matched by every *NotRepoError: the directory given to
	// Open is not the root of a git work tree.
	ErrNotRepo = errors.New("workspace: not a git repository")
	// ErrNoCommits is returned by Head (and by anything given "HEAD") on a
	// branch that has no commits yet.
	ErrNoCommits = errors.New("workspace: no commits yet")
	// ErrUnknownRevision is returned for a revision that names no commit.
	ErrUnknownRevision = errors.New("workspace: unknown revision")
	// ErrNothingToCommit is returned by Commit when the work tree has no
	// change to commit and CommitOptions.AllowEmpty is not set.
	ErrNothingToCommit = errors.New("workspace: nothing to commit")
	// ErrEmptyMessage is returned by Commit for a blank commit message.
	ErrEmptyMessage = errors.New("workspace: empty commit message")
	// ErrInvalidTrailer is returned by Commit for a trailer whose key is
	// not a token of letters, digits and dashes, or whose value spans lines.
	ErrInvalidTrailer = errors.New("workspace: invalid trailer")
	// ErrLocked is returned when a git lock file (index.lock, a ref's
	// .lock) exists: another git process is at work, or one crashed.
	ErrLocked = errors.New("workspace: git lock file exists")
	// ErrConcurrentUpdate is returned when HEAD's branch moved while a
	// commit or a reset was being prepared.
	ErrConcurrentUpdate = errors.New("workspace: branch moved concurrently")
	// ErrBranchExists is returned by CheckoutNewBranch for a branch name
	// that is taken.
	ErrBranchExists = errors.New("workspace: branch already exists")
	// ErrResetConflict is matched by every *ResetConflictError.
	ErrResetConflict = errors.New("workspace: reset blocked by files it must not touch")
	// ErrUnsafePath is returned for a tree entry whose name could escape the
	// work tree or write into .git ("..", ".git", a slash, a NUL byte).
	ErrUnsafePath = errors.New("workspace: unsafe path in tree")
)

// Error is a failed operation on a path: the operation, the path and the
// cause.
type Error struct {
	Op   string // open, status, commit, reset, write, ...
	Path string // the path (or revision) the operation was given
	Err  error
}

// Error returns "workspace: OP PATH: cause".
func (e *Error) Error() string {
	return fmt.Sprintf("workspace: %s %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// NotRepoError is returned by Open for a directory that is not the root of
// a git work tree. It matches ErrNotRepo.
type NotRepoError struct {
	Dir string // the directory given, made absolute
	// Root is the root of the work tree Dir lies inside, when it lies
	// inside one; empty otherwise.
	Root string
	// Bare is set when Dir is a bare repository: it has no work tree.
	Bare bool
}

// Error says what is wrong and what to do about it.
func (e *NotRepoError) Error() string {
	switch {
	case e.Bare:
		return fmt.Sprintf("workspace: %s is a bare git repository (gaffer needs a work tree)", e.Dir)
	case e.Root != "":
		return fmt.Sprintf("workspace: %s is not the root of a git work tree (the root is %s)", e.Dir, e.Root)
	default:
		return fmt.Sprintf("workspace: %s is not a git repository (run git init)", e.Dir)
	}
}

// Is makes every NotRepoError match ErrNotRepo.
func (e *NotRepoError) Is(target error) bool { return target == ErrNotRepo }

// ResetConflictError is returned by ResetTo when a file of the target
// commit cannot be written because its place is held by files the reset
// must not remove: ignored files, kept files or a nested repository inside
// a directory that stands where the commit has a file, or such a file
// standing where the commit has a directory. Nothing has been changed when
// it is returned. It matches ErrResetConflict.
type ResetConflictError struct {
	Path    string   // the target commit's path that cannot be written
	Blocked []string // the protected paths in the way
}

// Error names the path and what blocks it.
func (e *ResetConflictError) Error() string {
	return fmt.Sprintf("workspace: cannot restore %s: it is blocked by %s, which a reset must not remove",
		e.Path, strings.Join(e.Blocked, ", "))
}

// Is makes every ResetConflictError match ErrResetConflict.
func (e *ResetConflictError) Is(target error) bool { return target == ErrResetConflict }
