package workspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors of MergeBranch and PlanMerge. Test for them with errors.Is.
var (
	// ErrNoBranch is returned for a branch that does not exist.
	ErrNoBranch = errors.New("workspace: no such branch")
	// ErrDirty is matched by a *DirtyError: tracked files have changes.
	ErrDirty = errors.New("workspace: uncommitted changes")
	// ErrMergeConflict is matched by a *MergeConflictError.
	ErrMergeConflict = errors.New("workspace: merge conflict")
	// ErrDetached is returned by MergeBranch when HEAD is on no branch.
	ErrDetached = errors.New("workspace: HEAD is detached")
)

// DirtyError names the tracked files with uncommitted changes (staged or
// not) that keep an operation from touching the work tree. It matches
// ErrDirty.
type DirtyError struct {
	Paths []string
}

// Error names up to 10 of the paths.
func (e *DirtyError) Error() string {
	return "uncommitted changes to " + PathList(e.Paths, 10)
}

// Unwrap returns ErrDirty.
func (e *DirtyError) Unwrap() error { return ErrDirty }

// MergeConflictError names the files two branches both changed in ways git
// cannot merge. It matches ErrMergeConflict.
type MergeConflictError struct {
	Branch string
	Paths  []string
}

// Error names up to 10 of the paths.
func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("%s conflicts with HEAD in %s", e.Branch, PathList(e.Paths, 10))
}

// Unwrap returns ErrMergeConflict.
func (e *MergeConflictError) Unwrap() error { return ErrMergeConflict }

// PathList joins up to max paths with ", ", adding "and N more" for the
// rest.
func PathList(paths []string, max int) string {
	if len(paths) <= max {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:max], ", "), len(paths)-max)
}

// MergePlan is what merging a branch into the checked-out one does.
type MergePlan struct {
	Branch      string // the branch merged ("gaffer/RUN")
	Into        string // the checked-out branch ("main"), "" when detached
	Head        string // HEAD's commit before the merge
	Tip         string // the branch's commit
	Commits     int    // commits of Branch that HEAD does not have
	FastForward bool   // HEAD is an ancestor of Tip: no merge commit is needed
	Result      string // HEAD after MergeBranch; "" from PlanMerge
}

// UpToDate reports whether HEAD has every commit of the branch already.
func (p MergePlan) UpToDate() bool { return p.Commits == 0 }

// PlanMerge says what merging branch into the checked-out branch would do,
// without changing anything: how many commits it brings, whether it is a
// fast-forward. A branch that does not exist is ErrNoBranch, changes to
// tracked files a *DirtyError, and a merge git could not make without a
// conflict a *MergeConflictError naming the files (checked with `git
// merge-tree`, which touches neither the index nor the work tree).
func (r *Repo) PlanMerge(ctx context.Context, branch string) (MergePlan, error) {
	p := MergePlan{Branch: branch}
	tip, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return p, fmt.Errorf("%w: %s", ErrNoBranch, branch)
	}
	p.Tip = strings.TrimSpace(string(tip))
	if p.Head, err = r.Head(ctx); err != nil {
		return p, err
	}
	if p.Into, err = r.Branch(ctx); err != nil {
		return p, err
	}
	out, err := gitCLI(ctx, r.root, "rev-list", "--count", p.Head+".."+p.Tip)
	if err != nil {
		return p, &Error{Op: "merge", Path: branch, Err: err}
	}
	if p.Commits, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
		return p, &Error{Op: "merge", Path: branch, Err: err}
	}
	if p.Commits == 0 {
		return p, nil
	}
	if dirty, err := r.dirtyTracked(ctx); err != nil {
		return p, err
	} else if len(dirty) > 0 {
		return p, &DirtyError{Paths: dirty}
	}
	_, err = gitCLI(ctx, r.root, "merge-base", "--is-ancestor", p.Head, p.Tip)
	p.FastForward = err == nil
	if p.FastForward {
		return p, nil
	}
	out, err = gitCLI(ctx, r.root, "merge-tree", "--write-tree", "--name-only", "--no-messages", p.Head, p.Tip)
	if err != nil {
		// Exit 1 is a conflict: the tree's id, then the conflicted paths.
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 2 {
			return p, &Error{Op: "merge", Path: branch, Err: err}
		}
		return p, &MergeConflictError{Branch: branch, Paths: lines[1:]}
	}
	return p, nil
}

// MergeBranch merges branch into the checked-out branch, after PlanMerge's
// checks, so a dirty tree or a conflict changes nothing: a fast-forward
// when HEAD has no commit of its own, otherwise one merge commit with
// message. A branch HEAD already has is left alone (Result is Head).
// Repository hooks do not run.
func (r *Repo) MergeBranch(ctx context.Context, branch, message string) (MergePlan, error) {
	p, err := r.PlanMerge(ctx, branch)
	if err != nil || p.UpToDate() {
		p.Result = p.Head
		return p, err
	}
	if p.Into == "" {
		return p, fmt.Errorf("%w: check out the branch to merge %s into", ErrDetached, branch)
	}
	args := []string{"merge", "--no-edit", "-m", message, p.Tip}
	if p.FastForward {
		args = []string{"merge", "--ff-only", p.Tip}
	}
	if _, err := gitCLI(ctx, r.root, append(quietGit, args...)...); err != nil {
		_, _ = gitCLI(ctx, r.root, "merge", "--abort")
		return p, &Error{Op: "merge", Path: branch, Err: err}
	}
	if p.Result, err = r.Head(ctx); err != nil {
		return p, err
	}
	return p, nil
}

// quietGit turns off what a repository's configuration could run inside
// gaffer's git commands: hooks and a file-system monitor.
var quietGit = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}

// dirtyTracked returns the tracked files whose work tree or index differs
// from HEAD, sorted as git lists them.
func (r *Repo) dirtyTracked(ctx context.Context) ([]string, error) {
	out, err := gitCLI(ctx, r.root, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignored=no")
	if err != nil {
		return nil, &Error{Op: "status", Path: r.root, Err: err}
	}
	var paths []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' { // the rename's source follows
			i++
		}
	}
	return paths, nil
}

// BranchMerged reports whether every commit of branch is in HEAD or in a
// local branch outside the prefix skip ("gaffer/": the runs' own), so
// deleting it loses no work. A branch that does not exist is ErrNoBranch.
func (r *Repo) BranchMerged(ctx context.Context, branch, skip string) (bool, error) {
	tip, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return false, fmt.Errorf("%w: %s", ErrNoBranch, branch)
	}
	t := strings.TrimSpace(string(tip))
	if _, err := gitCLI(ctx, r.root, "merge-base", "--is-ancestor", t, "HEAD"); err == nil {
		return true, nil
	}
	out, err := gitCLI(ctx, r.root, "for-each-ref", "--contains", t, "--format=%(refname:short)", "refs/heads/")
	if err != nil {
		return false, &Error{Op: "branch", Path: branch, Err: err}
	}
	for _, b := range strings.Fields(string(out)) {
		if !strings.HasPrefix(b, skip) {
			return true, nil
		}
	}
	return false, nil
}

// Refs returns the full names of the refs under prefix
// ("refs/gaffer/rescue/RUN/"), sorted.
func (r *Repo) Refs(ctx context.Context, prefix string) ([]string, error) {
	out, err := gitCLI(ctx, r.root, "for-each-ref", "--format=%(refname)", prefix)
	if err != nil {
		return nil, &Error{Op: "refs", Path: prefix, Err: err}
	}
	return strings.Fields(string(out)), nil
}

// DeleteRef removes the ref name (a full name, "refs/heads/gaffer/RUN"). A
// ref that is gone already is not an error. A branch checked out in a work
// tree cannot be deleted: git refuses.
func (r *Repo) DeleteRef(ctx context.Context, name string) error {
	if strings.HasPrefix(name, "refs/heads/") {
		if _, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", name); err != nil {
			return nil
		}
		if _, err := gitCLI(ctx, r.root, "branch", "-D", strings.TrimPrefix(name, "refs/heads/")); err != nil {
			return &Error{Op: "delete", Path: name, Err: err}
		}
		return nil
	}
	if _, err := gitCLI(ctx, r.root, "update-ref", "-d", name); err != nil {
		return &Error{Op: "delete", Path: name, Err: err}
	}
	return nil
}
