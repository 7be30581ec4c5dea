package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A phase's lanes each work in a tree of their own (AddLaneTree), made
// from the phase's base commit with a detached HEAD, so that one lane
// never sees another's half-written files. A lane's work is committed in
// its tree and kept by a ref (SetRef) under LaneRefPrefix; Combine merges
// the lanes' commits without touching a work tree or the index (git
// merge-tree), and ApplyTree puts the combined tree into the run's work
// tree, where it is reviewed and committed as the phase's one commit.

// LaneRefPrefix is where the lanes' commits are kept until their phase is
// committed: refs/gaffer/lanes/<run-id>/p<phase>/<lane>.
const LaneRefPrefix = "refs/gaffer/lanes/"

// LaneTreesDir is the directory, in the repository's (common) git
// directory, under which the lanes' work trees are made: private to
// gaffer, never in a work tree, so no reset or commit of the run's tree
// can touch them.
const LaneTreesDir = "gaffer-lanes"

// LaneTrees returns the absolute directory of the lanes' work trees of r's
// repository (see LaneTreesDir).
func (r *Repo) LaneTrees() string { return filepath.Join(r.commonDir, LaneTreesDir) }

// AddLaneTree makes dir a fresh linked work tree of r's repository with a
// detached HEAD at base, and opens it. What a killed process left at dir
// (a tree, half checked out, or git's record of one) is removed first;
// dir must be a directory gaffer owns.
//
// Lanes are made at once, but two `git worktree add` at once fail (each
// reads the records of the others, one of which may be half written): the
// record is made under WorkTreesLockFile (`git worktree add
// --no-checkout`, which writes no file of the tree), and the tree's files
// are checked out after, outside the lock, each lane in its own index.
func (r *Repo) AddLaneTree(ctx context.Context, dir, base string) (*Repo, error) {
	if _, err := os.Lstat(dir); err == nil {
		if err := r.RemoveLaneTree(ctx, dir); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	unlock, err := r.lockWorkTrees(ctx)
	if err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	// -f -f: a record of dir that a killed add left (missing, or locked
	// while "initializing") is replaced.
	_, err = gitCLI(ctx, r.root, "worktree", "add", "-q", "-f", "-f", "--no-checkout", "--detach", dir, base)
	unlock()
	if err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	if _, err := gitCLI(ctx, dir, "reset", "-q", "--hard"); err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	wt, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	if err := private(wt.gitDir); err != nil {
		return nil, &Error{Op: "add lane tree", Path: wt.gitDir, Err: err}
	}
	return wt, nil
}

// RemoveLaneTree removes the lane tree at dir and git's record of it; a
// dir already gone is no error. The files go outside WorkTreesLockFile
// (lanes are removed at once), the record under it.
func (r *Repo) RemoveLaneTree(ctx context.Context, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	record := ""
	if b, err := os.ReadFile(filepath.Join(dir, ".git")); err == nil {
		if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			g = absFrom(dir, g)
			// Only a record of this repository's, never a path a
			// stranger's .git file names.
			if filepath.Dir(g) == filepath.Join(r.commonDir, "worktrees") {
				record = g
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return &Error{Op: "remove lane tree", Path: dir, Err: err}
	}
	if record == "" {
		return nil // no record, or one the next add replaces
	}
	unlock, err := r.lockWorkTrees(ctx)
	if err != nil {
		return &Error{Op: "remove lane tree", Path: dir, Err: err}
	}
	defer unlock()
	if err := os.RemoveAll(record); err != nil {
		return &Error{Op: "remove lane tree", Path: record, Err: err}
	}
	return nil
}

// SetRef points the ref name (a full name under refs/) at commit,
// creating it, under git's lock protocol.
func (r *Repo) SetRef(ctx context.Context, name, commit string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
		return &Error{Op: "set ref", Path: name, Err: errors.New("not a ref under refs/")}
	}
	h := plumbing.NewHash(commit)
	if h.IsZero() || h.String() != commit {
		return &Error{Op: "set ref", Path: name, Err: fmt.Errorf("%q is not a commit hash", commit)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.setRef(name, h)
}

// Combined is what Combine made of the lanes' commits.
type Combined struct {
	// Commit holds base with every merged lane's work: base itself when
	// no lane merged, the one lane's commit when one did, else a merge
	// commit Combine wrote (objects only: no branch points at it). A
	// lane that conflicted runs again from it.
	Commit string
	// Tree is Commit's tree: what the phase's work tree becomes.
	Tree string
	// Merged lists the indexes (into heads) of the lanes merged, in order.
	Merged []int
	// Conflicts are the lanes whose work conflicted with the lanes merged
	// before them, in order: they are not in Commit.
	Conflicts []LaneConflict
}

// LaneConflict is a lane whose commit did not merge: its index in
// Combine's heads and the paths git could not merge.
type LaneConflict struct {
	Lane  int
	Paths []string
}

// combineSignature signs the merge commits Combine writes. They are never
// on a branch; a fixed identity and date make the same merge the same
// commit, so Combine run again (a resumed phase) gives the same result.
var combineSignature = object.Signature{Name: "gaffer", Email: "gaffer@localhost", When: time.Unix(0, 0).UTC()}

// Combine merges heads, commits of the phase's lanes made on base (or on
// an earlier Combined.Commit), in order onto base, without touching a
// work tree or the index: the first that descends from base is taken as
// it is, each next one merged with git merge-tree --write-tree (a
// three-way merge at their merge base, so two lanes that changed
// different lines of one file merge). A lane whose merge conflicts is
// left out and named in Conflicts, with the paths; the others go on. An
// empty head is skipped. The same heads give the same result.
func (r *Repo) Combine(ctx context.Context, base string, heads []string) (Combined, error) {
	out := Combined{Commit: base}
	for i, h := range heads {
		if h == "" {
			continue
		}
		if out.Commit == base {
			if _, err := gitCLI(ctx, r.root, "merge-base", "--is-ancestor", base, h); err == nil {
				out.Commit = h
				out.Merged = append(out.Merged, i)
				continue
			}
		}
		b, err := gitCLI(ctx, r.root, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", out.Commit, h)
		fields := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		tree := strings.TrimSpace(fields[0])
		if err != nil {
			// A conflict: the tree git would write, then the paths.
			if len(fields) < 2 || !plumbing.IsHash(tree) {
				return out, &Error{Op: "combine", Path: h, Err: err}
			}
			out.Conflicts = append(out.Conflicts, LaneConflict{Lane: i, Paths: slices.Compact(slices.Clone(fields[1:]))})
			continue
		}
		if !plumbing.IsHash(tree) {
			return out, &Error{Op: "combine", Path: h, Err: fmt.Errorf("git merge-tree printed %q, not a tree", b)}
		}
		m, err := r.mergeCommit(tree, out.Commit, h)
		if err != nil {
			return out, err
		}
		out.Commit = m
		out.Merged = append(out.Merged, i)
	}
	t, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", out.Commit+"^{tree}")
	if err != nil {
		return out, &Error{Op: "combine", Path: out.Commit, Err: err}
	}
	out.Tree = strings.TrimSpace(string(t))
	return out, nil
}

// mergeCommit writes (objects only) the commit of tree with parents a and
// b, signed combineSignature.
func (r *Repo) mergeCommit(tree, a, b string) (string, error) {
	c := &object.Commit{Author: combineSignature, Committer: combineSignature, Message: "gaffer: lanes combined\n",
		TreeHash: plumbing.NewHash(tree), ParentHashes: []plumbing.Hash{plumbing.NewHash(a), plumbing.NewHash(b)}}
	r.mu.Lock()
	defer r.mu.Unlock()
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", &Error{Op: "combine", Path: tree, Err: err}
	}
	h, err := r.store(obj)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// ApplyTree makes the work tree's files go from commit from's tree to the
// tree (or commit) to, touching only the paths the two differ in, as an
// agent would: the index and HEAD are not changed, so the paths show as
// changes to be reviewed and committed. A path already as to has it is
// left (ApplyTree run again after a crash finishes the job); a path that
// is neither as from nor as to has it was changed by someone else, and
// ApplyTree changes nothing and returns a *DirtyError naming such paths.
// It returns the blob hash of every path it was to change ("" for one
// removed): the work the tree stands for.
func (r *Repo) ApplyTree(ctx context.Context, from, to string) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, err := r.filesOf(ctx, from)
	if err != nil {
		return nil, err
	}
	b, err := r.filesOf(ctx, to)
	if err != nil {
		return nil, err
	}
	var changed []string
	for p, f := range a {
		if g, ok := b[p]; !ok || g != f {
			changed = append(changed, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	var todo, others []string
	for _, p := range changed {
		cur, ok, err := r.workFile(p)
		if err != nil {
			return nil, err
		}
		want, inB := b[p]
		was, inA := a[p]
		switch {
		case ok == inB && (!ok || cur == want):
			// already as to has it
		case ok == inA && (!ok || cur == was):
			todo = append(todo, p)
		default:
			others = append(others, p)
		}
	}
	if len(others) > 0 {
		return nil, &DirtyError{Paths: others}
	}
	// Removals first: a file may give way to a directory of that name.
	for _, p := range todo {
		if _, ok := b[p]; !ok {
			if err := r.restoreWorkFile(p, b); err != nil {
				return nil, err
			}
			r.pruneEmptyParents(p)
		}
	}
	for _, p := range todo {
		if _, ok := b[p]; ok {
			if err := r.restoreWorkFile(p, b); err != nil {
				return nil, err
			}
		}
	}
	written := make(map[string]string, len(changed))
	for _, p := range changed {
		written[p] = ""
		if f, ok := b[p]; ok {
			written[p] = f.hash.String()
		}
	}
	return written, nil
}

// filesOf flattens the tree of rev (a commit or a tree).
func (r *Repo) filesOf(ctx context.Context, rev string) (map[string]treeFile, error) {
	h := plumbing.NewHash(rev)
	if h.String() != rev {
		return nil, &Error{Op: "read tree", Path: rev, Err: errors.New("not an object hash")}
	}
	if c, err := object.GetCommit(r.repo.Storer, h); err == nil {
		return r.treeFiles(ctx, c.TreeHash)
	}
	return r.treeFiles(ctx, h)
}

// workFile returns the work tree's p as a tree would hold it (ok false
// when it is missing or not a file).
func (r *Repo) workFile(p string) (treeFile, bool, error) {
	abs := filepath.Join(r.root, filepath.FromSlash(p))
	fi, err := os.Lstat(abs)
	if err != nil {
		if isNotExist(err) {
			return treeFile{}, false, nil
		}
		return treeFile{}, false, &Error{Op: "read", Path: p, Err: err}
	}
	if !isFileInfo(fi) {
		return treeFile{}, false, nil
	}
	data, err := readContent(abs, fi)
	if err != nil {
		return treeFile{}, false, &Error{Op: "read", Path: p, Err: err}
	}
	return treeFile{hash: plumbing.ComputeHash(plumbing.BlobObject, data), mode: worktreeMode(fi, true, 0)}, true, nil
}

// pruneEmptyParents removes the directories above p that its removal
// left empty.
func (r *Repo) pruneEmptyParents(p string) {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if os.Remove(filepath.Join(r.root, filepath.FromSlash(d))) != nil {
			return
		}
	}
}

// LaneFiles lists the files under dir (slash, relative to the work tree
// at root), for copying the execution directory into a lane's tree; none
// when dir is missing.
func LaneFiles(root, dir string) ([]string, error) {
	var out []string
	base := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if isNotExist(err) && p == base {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || isTempName(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !isNotExist(err) {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	return out, nil
}
