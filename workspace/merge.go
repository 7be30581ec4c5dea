package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	// ErrInProgress is matched by an *InProgressError: the user's own
	// merge, rebase, cherry-pick, revert, am or bisect is under way.
	ErrInProgress = errors.New("workspace: a git operation is in progress")
	// ErrInTheWay is matched by an *InTheWayError: untracked or ignored
	// files stand where a merge would write.
	ErrInTheWay = errors.New("workspace: files in the way")
)

// InProgressError is a git operation of the user's under way in the
// checkout (Op: merge, rebase, am, cherry-pick, revert or bisect), which
// a merge must neither finish nor abort. It matches ErrInProgress.
type InProgressError struct {
	Op string
}

// Error names the operation.
func (e *InProgressError) Error() string { return "a git " + e.Op + " is in progress" }

// Unwrap returns ErrInProgress.
func (e *InProgressError) Unwrap() error { return ErrInProgress }

// Finish is the git command that ends the operation without keeping it
// ("git merge --abort"); its --continue (or git commit) keeps it.
func (e *InProgressError) Finish() string {
	if e.Op == "bisect" {
		return "git bisect reset"
	}
	return "git " + e.Op + " --abort"
}

// InTheWayError names the files a merge would overwrite that git does not
// track: Untracked ones (git refuses), and Ignored ones, which git would
// replace without a word (a .env, a local build setting). It matches
// ErrInTheWay.
type InTheWayError struct {
	Untracked, Ignored []string
}

// Paths is every file in the way, the untracked ones first.
func (e *InTheWayError) Paths() []string {
	return append(append([]string{}, e.Untracked...), e.Ignored...)
}

// Error names up to 10 of the paths.
func (e *InTheWayError) Error() string {
	return "files git does not track are in the way: " + e.Describe(10)
}

// Unwrap returns ErrInTheWay.
func (e *InTheWayError) Unwrap() error { return ErrInTheWay }

// Describe names up to max of the paths, saying which are ignored.
func (e *InTheWayError) Describe(max int) string {
	var parts []string
	if len(e.Untracked) > 0 {
		parts = append(parts, "untracked "+PathList(e.Untracked, max))
	}
	if len(e.Ignored) > 0 {
		parts = append(parts, "ignored "+PathList(e.Ignored, max))
	}
	return strings.Join(parts, "; ")
}

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
// fast-forward. A branch that does not exist is ErrNoBranch; a merge,
// rebase, cherry-pick, revert, am or bisect of the user's under way an
// *InProgressError; changes to tracked files a *DirtyError; a merge git
// could not make without a conflict a *MergeConflictError naming the
// files (checked with `git merge-tree`, which touches neither the index
// nor the work tree); and files git does not track, ignored ones
// included, where the merge would write an *InTheWayError.
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
	if op := r.inProgress(); op != "" {
		return p, &InProgressError{Op: op}
	}
	if dirty, err := r.dirtyTracked(ctx); err != nil {
		return p, err
	} else if len(dirty) > 0 {
		return p, &DirtyError{Paths: dirty}
	}
	_, err = gitCLI(ctx, r.root, "merge-base", "--is-ancestor", p.Head, p.Tip)
	p.FastForward = err == nil
	result := p.Tip
	if !p.FastForward {
		out, err = gitCLI(ctx, r.root, "merge-tree", "--write-tree", "--name-only", "--no-messages", p.Head, p.Tip)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil {
			// Exit 1 is a conflict: the tree's id, then the conflicted paths.
			if len(lines) < 2 {
				return p, &Error{Op: "merge", Path: branch, Err: err}
			}
			return p, &MergeConflictError{Branch: branch, Paths: lines[1:]}
		}
		result = lines[0]
	}
	if err := r.checkInTheWay(ctx, p.Head, result); err != nil {
		return p, err
	}
	return p, nil
}

// inProgress names the git operation of the user's under way in the
// checkout, by the files git keeps for it in the work tree's git
// directory: "merge", "rebase", "am", "cherry-pick", "revert", "bisect",
// or "" for none.
func (r *Repo) inProgress() string {
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(r.gitDir, name))
		return err == nil
	}
	switch {
	case exists("MERGE_HEAD"):
		return "merge"
	case exists("rebase-apply/applying"):
		return "am"
	case exists("rebase-merge"), exists("rebase-apply"):
		return "rebase"
	case exists("CHERRY_PICK_HEAD"):
		return "cherry-pick"
	case exists("REVERT_HEAD"):
		return "revert"
	case exists("BISECT_LOG"), exists("BISECT_START"):
		return "bisect"
	}
	return ""
}

// checkInTheWay returns an *InTheWayError naming the files git does not
// track that stand where the tree result writes what head lacks: a file
// at a path it adds, or a file where it needs a directory. git refuses
// an untracked one with lines of its own, and replaces an ignored one
// without a word; both are the user's.
func (r *Repo) checkInTheWay(ctx context.Context, head, result string) error {
	out, err := gitCLI(ctx, r.root, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=A", head, result)
	if err != nil {
		return &Error{Op: "merge", Path: result, Err: err}
	}
	var added []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			added = append(added, p)
		}
	}
	candidates := inTheWay(added, func(p string) (dir, ok bool) {
		fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p)))
		return err == nil && fi.IsDir(), err == nil
	})
	if len(candidates) == 0 {
		return nil
	}
	// git says which of them it tracks, ignores or neither, and what an
	// untracked directory holds.
	args := append([]string{"--literal-pathspecs", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--"}, candidates...)
	out, err = gitCLI(ctx, r.root, args...)
	if err != nil {
		return &Error{Op: "status", Path: r.root, Err: err}
	}
	e := &InTheWayError{}
	for _, f := range strings.Split(string(out), "\x00") {
		switch {
		case strings.HasPrefix(f, "?? "):
			e.Untracked = append(e.Untracked, f[3:])
		case strings.HasPrefix(f, "!! "):
			e.Ignored = append(e.Ignored, f[3:])
		}
	}
	if len(e.Untracked)+len(e.Ignored) == 0 {
		return nil
	}
	sort.Strings(e.Untracked)
	sort.Strings(e.Ignored)
	return e
}

// inTheWay returns the paths of the work tree that stand in the way of
// the paths added (slash paths a merge writes and HEAD lacks), as stat
// finds them: each added path that exists, and each leading directory of
// one that exists but is not a directory. Each is named once, in order.
func inTheWay(added []string, stat func(p string) (dir, ok bool)) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range added {
		blocked := false
		for i := 0; i < len(p); i++ {
			if p[i] != '/' {
				continue
			}
			dir, ok := stat(p[:i])
			if !ok {
				blocked = true // nothing there, nor below
				break
			}
			if !dir {
				add(p[:i])
				blocked = true
				break
			}
		}
		if blocked {
			continue
		}
		if _, ok := stat(p); ok {
			add(p)
		}
	}
	return out
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
		// PlanMerge refused a merge of the user's under way: a MERGE_HEAD
		// now naming the branch's tip is this merge's, and goes. Any
		// other is not gaffer's to abort.
		if b, rerr := os.ReadFile(filepath.Join(r.gitDir, "MERGE_HEAD")); rerr == nil && strings.TrimSpace(string(b)) == p.Tip {
			_, _ = gitCLI(ctx, r.root, "merge", "--abort")
		}
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

// BranchMerged reports whether every commit of branch is in a local
// branch outside the prefix skip ("gaffer/": the runs' own), so deleting
// it loses no work. HEAD alone does not count: a detached HEAD (`git
// checkout --detach gaffer/RUN`) keeps commits only until the next
// checkout, and then the reflog alone has them. A branch that does not
// exist is ErrNoBranch.
func (r *Repo) BranchMerged(ctx context.Context, branch, skip string) (bool, error) {
	tip, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return false, fmt.Errorf("%w: %s", ErrNoBranch, branch)
	}
	t := strings.TrimSpace(string(tip))
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
	if b, ok := strings.CutPrefix(name, "refs/heads/"); ok {
		return r.DeleteBranch(ctx, b)
	}
	if _, err := gitCLI(ctx, r.root, "update-ref", "-d", name); err != nil {
		return &Error{Op: "delete", Path: name, Err: err}
	}
	return nil
}
