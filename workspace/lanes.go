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
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
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
// Lanes are made at once, and two `git worktree add` at once fail (each
// reads the others' records, one of which may be half written). So the
// record (.git/worktrees/NAME: gitdir, commondir, HEAD, as git writes
// it) is made here, complete, in a directory of its own and renamed into
// place, after the tree's .git file that points at it: git never sees a
// record half made, nor one whose tree is missing (which a prune would
// take). The tree's files are then checked out by `git reset --hard`, in
// its own index, lanes at once.
func (r *Repo) AddLaneTree(ctx context.Context, dir, base string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	if _, err := os.Lstat(abs); err == nil {
		if err := r.RemoveLaneTree(ctx, abs); err != nil {
			return nil, err
		}
	}
	if err := r.laneRecord(abs, base); err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	if _, err := gitCLI(ctx, abs, "reset", "-q", "--hard"); err != nil {
		return nil, &Error{Op: "add lane tree", Path: dir, Err: err}
	}
	wt, err := Open(abs)
	if err != nil {
		return nil, err
	}
	if err := private(wt.gitDir); err != nil {
		return nil, &Error{Op: "add lane tree", Path: wt.gitDir, Err: err}
	}
	return wt, nil
}

// laneRecord makes the directory dir (0700) with its .git file and git's
// record of it, HEAD detached at base (see AddLaneTree).
func (r *Repo) laneRecord(dir, base string) error {
	if h := plumbing.NewHash(base); h.IsZero() || h.String() != base {
		return fmt.Errorf("%q is not a commit hash", base)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	records := filepath.Join(r.commonDir, "worktrees")
	if err := os.MkdirAll(records, 0o755); err != nil {
		return err
	}
	staging := filepath.Join(r.LaneTrees(), ".staging")
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(staging, filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone once renamed; a leftover otherwise
	for name, content := range map[string]string{
		"gitdir":    filepath.Join(dir, ".git") + "\n",
		"commondir": filepath.Join("..", "..") + "\n",
		"HEAD":      base + "\n",
	} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o600); err != nil {
			return err
		}
	}
	name := filepath.Base(dir)
	for n := 1; ; n++ {
		record := filepath.Join(records, name)
		if n > 1 {
			record = fmt.Sprintf("%s%d", record, n)
		}
		if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+record+"\n"), 0o600); err != nil {
			return err
		}
		err := os.Rename(tmp, record)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
			return err
		}
		// A record of that name: ours (a tree a crash removed), or
		// another tree's; ours goes, another's stays and the name takes
		// a number.
		if recordOf(record, dir) {
			if err := r.dropRecord(record); err != nil {
				return err
			}
			n--
		}
		if n > 100 {
			return fmt.Errorf("no free name for git's record of %s", dir)
		}
	}
}

// RemoveLaneTree removes the lane tree at dir and git's record of it; a
// dir already gone is no error. The record goes first, by a rename out of
// git's sight (lanes are removed at once, while others are made), then
// the files.
func (r *Repo) RemoveLaneTree(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".git")); err == nil {
		if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			g = absFrom(dir, g)
			// Only a record of this repository's, never a path a
			// stranger's .git file names, and only this tree's own: a
			// process killed in laneRecord leaves a .git file naming a
			// record it did not get, which another tree holds.
			if filepath.Dir(g) == filepath.Join(r.commonDir, "worktrees") && recordOf(g, dir) {
				if err := r.dropRecord(g); err != nil {
					return &Error{Op: "remove lane tree", Path: dir, Err: err}
				}
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return &Error{Op: "remove lane tree", Path: dir, Err: err}
	}
	return nil
}

// recordOf reports whether git's record at record is the work tree dir's:
// its gitdir names dir's .git file (gitFileNames).
func recordOf(record, dir string) bool {
	b, err := os.ReadFile(filepath.Join(record, "gitdir"))
	if err != nil {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	return gitFileNames(abs)[filepath.Clean(strings.TrimSpace(string(b)))]
}

// dropRecord removes git's record of a work tree: renamed out of
// .git/worktrees at once, then removed.
func (r *Repo) dropRecord(record string) error {
	trash := filepath.Join(r.LaneTrees(), ".trash")
	if err := os.MkdirAll(trash, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(trash, filepath.Base(record)+"-")
	if err != nil {
		return err
	}
	if err := os.Rename(record, filepath.Join(tmp, "record")); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.Remove(tmp)
		return err
	}
	return os.RemoveAll(tmp)
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

// ClearRefLock removes the lock file of the ref name (a full name under
// refs/) that a process killed while it set the ref left behind. Only a
// caller that knows no live process sets the ref may call it: the
// workflow for its run's lane refs, which only the run's lease holder
// sets.
func (r *Repo) ClearRefLock(name string) error {
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
		return &Error{Op: "clear ref lock", Path: name, Err: errors.New("not a ref under refs/")}
	}
	lock := r.refFile(plumbing.ReferenceName(name)) + ".lock"
	if err := os.Remove(lock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return &Error{Op: "clear ref lock", Path: lock, Err: err}
	}
	return nil
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
// work tree or the index. The first that descends from base is taken as
// it is; each next one is merged into what is merged so far: at once,
// in-process, when the paths it changed (from base) are apart from those
// already merged (none the same, none a directory of another: the lanes'
// usual case), else with git merge-tree --write-tree, a three-way merge
// at their merge base, so two lanes that changed different lines of one
// file merge too. A lane whose merge conflicts is left out and named in
// Conflicts, with the paths; the others go on. An empty head is skipped.
// The same heads give the same result, and the same as merge-tree's.
func (r *Repo) Combine(ctx context.Context, base string, heads []string) (Combined, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Combined{Commit: base}
	bc, err := r.commitAt(base)
	if err != nil {
		return out, err
	}
	baseSeen := map[plumbing.Hash]struct{}{}
	baseFiles, err := r.treeFilesSeen(ctx, bc.TreeHash, baseSeen)
	if err != nil {
		return out, err
	}
	merged := map[string]*treeFile{} // what is merged so far, by path: its file, nil for removed
	tree := bc.TreeHash
	for i, h := range heads {
		if h == "" {
			continue
		}
		hc, err := r.commitAt(h)
		if err != nil {
			return out, err
		}
		files, err := r.treeFiles(ctx, hc.TreeHash)
		if err != nil {
			return out, err
		}
		changes := diffFiles(baseFiles, files)
		if out.Commit == base && len(hc.ParentHashes) == 1 && hc.ParentHashes[0].String() == base {
			out.Commit, tree, merged = h, hc.TreeHash, changes
			out.Merged = append(out.Merged, i)
			continue
		}
		if apart(merged, changes) {
			for p, f := range changes {
				merged[p] = f
			}
			t, err := r.treeOf(baseFiles, merged, baseSeen)
			if err != nil {
				return out, err
			}
			if out.Commit, err = r.mergeCommit(t.String(), out.Commit, h); err != nil {
				return out, err
			}
			tree = t
			out.Merged = append(out.Merged, i)
			continue
		}
		b, err := gitCLI(ctx, r.root, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", out.Commit, h)
		fields := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		t := strings.TrimSpace(fields[0])
		if err != nil {
			// A conflict: the tree git would write, then the paths.
			if len(fields) < 2 || !plumbing.IsHash(t) {
				return out, &Error{Op: "combine", Path: h, Err: err}
			}
			out.Conflicts = append(out.Conflicts, LaneConflict{Lane: i, Paths: slices.Compact(slices.Clone(fields[1:]))})
			continue
		}
		if !plumbing.IsHash(t) {
			return out, &Error{Op: "combine", Path: h, Err: fmt.Errorf("git merge-tree printed %q, not a tree", b)}
		}
		if out.Commit, err = r.mergeCommit(t, out.Commit, h); err != nil {
			return out, err
		}
		tree = plumbing.NewHash(t)
		now, err := r.treeFiles(ctx, tree)
		if err != nil {
			return out, err
		}
		merged = diffFiles(baseFiles, now)
		out.Merged = append(out.Merged, i)
	}
	out.Tree = tree.String()
	return out, nil
}

// commitAt reads the commit object h. r.mu is held.
func (r *Repo) commitAt(h string) (*object.Commit, error) {
	c, err := object.GetCommit(r.repo.Storer, plumbing.NewHash(h))
	if err != nil || c.Hash.String() != h {
		return nil, &Error{Op: "combine", Path: h, Err: fmt.Errorf("not a commit: %w", err)}
	}
	return c, nil
}

// diffFiles is what goes from a to b, by path: b's file, nil for one b
// does not have.
func diffFiles(a, b map[string]treeFile) map[string]*treeFile {
	out := map[string]*treeFile{}
	for p, f := range a {
		if g, ok := b[p]; !ok {
			out[p] = nil
		} else if g != f {
			g := g
			out[p] = &g
		}
	}
	for p, g := range b {
		if _, ok := a[p]; !ok {
			g := g
			out[p] = &g
		}
	}
	return out
}

// apart reports whether no path of b is one of a's or holds or is held by
// one of a's: two lanes that changed such paths are merged by git.
func apart(a, b map[string]*treeFile) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	dirs := map[string]bool{}
	for p := range a {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for p := range b {
		if _, ok := a[p]; ok || dirs[p] {
			return false
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := a[d]; ok {
				return false
			}
		}
	}
	return true
}

// treeOf writes (objects only) the tree of base's files with changes laid
// over them, and returns its hash; base's trees (have) are not written
// again. r.mu is held.
func (r *Repo) treeOf(base map[string]treeFile, changes map[string]*treeFile, have map[plumbing.Hash]struct{}) (plumbing.Hash, error) {
	entries := make([]*index.Entry, 0, len(base)+len(changes))
	for p, f := range base {
		if _, changed := changes[p]; !changed {
			entries = append(entries, &index.Entry{Name: p, Hash: f.hash, Mode: f.mode})
		}
	}
	for p, f := range changes {
		if f != nil {
			entries = append(entries, &index.Entry{Name: p, Hash: f.hash, Mode: f.mode})
		}
	}
	return r.writeTree(entries, have, nil)
}

// mergeCommit writes (objects only) the commit of tree with parents a and
// b, signed combineSignature. r.mu is held.
func (r *Repo) mergeCommit(tree, a, b string) (string, error) {
	c := &object.Commit{Author: combineSignature, Committer: combineSignature, Message: "gaffer: lanes combined\n",
		TreeHash: plumbing.NewHash(tree), ParentHashes: []plumbing.Hash{plumbing.NewHash(a), plumbing.NewHash(b)}}
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
	a, b, err := r.filesOfBoth(ctx, from, to)
	if err != nil {
		return nil, err
	}
	changed := changedFiles(a, b)
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

// ChangedPaths returns, sorted, the paths whose files differ between the
// trees of from and to (commits or trees): those ApplyTree changes.
func (r *Repo) ChangedPaths(ctx context.Context, from, to string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, b, err := r.filesOfBoth(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return changedFiles(a, b), nil
}

// filesOfBoth returns the files of from and of to (commits or trees).
func (r *Repo) filesOfBoth(ctx context.Context, from, to string) (a, b map[string]treeFile, err error) {
	if a, err = r.filesOf(ctx, from); err != nil {
		return nil, nil, err
	}
	if b, err = r.filesOf(ctx, to); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// changedFiles returns, sorted, the paths whose files differ between the
// flattened trees a and b.
func changedFiles(a, b map[string]treeFile) []string {
	var out []string
	for p, f := range a {
		if g, ok := b[p]; !ok || g != f {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
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
