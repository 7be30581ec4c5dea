package workspace

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// StashRefPrefix is where Stash keeps its commits alive: StashRefPrefix +
// a name (the run id).
const StashRefPrefix = "refs/gaffer/stash/"

// Stash records the user's uncommitted changes as git objects, the way
// `git stash --include-untracked` does, without touching the work tree or
// the index: a commit I of the index's tree, and a commit W of the work
// tree's tree — every tracked file as it is on disk and every untracked
// file that is not ignored, except the paths in exclude — whose parents
// are HEAD and I. The ref StashRefPrefix+name points at W, so nothing
// prunes them. It returns W's hash, or "" (and no ref) when there is
// nothing to record. RestoreStash puts the changes back.
//
// Ignored files, nested repositories and unmerged index entries are not
// recorded (they are not touched by anything the workflow does either).
// Stash is idempotent: the same tree at the same HEAD makes the same
// commits.
func (r *Repo) Stash(ctx context.Context, name string, exclude []string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() (string, error) { return r.stash(ctx, StashRefPrefix+name, name, exclude) })
}

// RescueRefPrefix is where Rescue keeps its commits alive: RescueRefPrefix
// + a name.
const RescueRefPrefix = "refs/gaffer/rescue/"

// Rescue records the uncommitted changes a reset is about to discard, as
// Stash does, under the ref RescueRefPrefix+name, and returns the work
// tree commit's hash ("" when there is nothing to record). The commits
// have the shape of git stash's, so `git stash apply HASH` puts the
// changes back. When known is the hash of a commit Stash made whose index
// and work trees are the changes found, they are kept already: Rescue
// records nothing and returns "". The commits are dated when, the time
// of the rescue (zero: one second after HEAD, as Stash's, for
// reproducible commits).
func (r *Repo) Rescue(ctx context.Context, name string, exclude []string, known string, when time.Time) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() (string, error) {
		return r.stashUnless(ctx, RescueRefPrefix+name, name, exclude, known, when)
	})
}

func (r *Repo) stash(ctx context.Context, ref, name string, exclude []string) (string, error) {
	return r.stashUnless(ctx, ref, name, exclude, "", time.Time{})
}

// sameChanges reports whether known is a stash commit (work tree commit
// with the index commit as its second parent) of exactly these trees.
func (r *Repo) sameChanges(known string, indexTree, workTree plumbing.Hash) bool {
	w, err := r.commitObject(known, plumbing.NewHash(known))
	if err != nil || w.TreeHash != workTree || len(w.ParentHashes) != 2 {
		return false
	}
	i, err := r.commitObject(known+"^2", w.ParentHashes[1])
	return err == nil && i.TreeHash == indexTree
}

// stashUnless is Stash and Rescue: their commits are dated when, or
// with when zero one second after HEAD.
func (r *Repo) stashUnless(ctx context.Context, ref, name string, exclude []string, known string, when time.Time) (string, error) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		return "", err
	}
	if snap.headHash.IsZero() {
		return "", fmt.Errorf("%w (branch %s is unborn: make a first commit)", ErrNoCommits, r.branchName())
	}
	var staged []*index.Entry
	for _, p := range sortedKeys(snap.idx) {
		staged = append(staged, snap.idx[p])
	}
	indexTree, err := r.writeTree(staged, nil, nil)
	if err != nil {
		return "", err
	}
	work, err := r.stage(ctx, snap, newPathSet(exclude))
	if err != nil {
		return "", err
	}
	workTree, err := r.writeTree(work, nil, nil)
	if err != nil {
		return "", err
	}
	if indexTree == snap.headTree && workTree == snap.headTree {
		return "", nil
	}
	if known != "" && r.sameChanges(known, indexTree, workTree) {
		return "", nil
	}
	osig, err := r.signatureOn(snap.headHash, when)
	if err != nil {
		return "", err
	}
	mk := func(msg string, tree plumbing.Hash, parents ...plumbing.Hash) (plumbing.Hash, error) {
		c := &object.Commit{Author: osig, Committer: osig, Message: msg, TreeHash: tree, ParentHashes: parents}
		obj := r.repo.Storer.NewEncodedObject()
		if err := c.Encode(obj); err != nil {
			return plumbing.ZeroHash, &Error{Op: "stash", Path: r.root, Err: err}
		}
		return r.store(obj)
	}
	i, err := mk("gaffer: the index before "+name+"\n", indexTree, snap.headHash)
	if err != nil {
		return "", err
	}
	w, err := mk("gaffer: uncommitted changes before "+name+"\n", workTree, snap.headHash, i)
	if err != nil {
		return "", err
	}
	if err := r.setRef(ref, w); err != nil {
		return "", err
	}
	return w.String(), nil
}

// setRef points the loose ref name at h, under git's lock protocol.
func (r *Repo) setRef(name string, h plumbing.Hash) error {
	l, err := lock(r.refFile(plumbing.ReferenceName(name)))
	if err != nil {
		return err
	}
	return l.commit([]byte(h.String() + "\n"))
}

// DropStash removes the ref Stash made for name; the commits stay until
// git prunes them. Dropping a ref that is gone is not an error.
func (r *Repo) DropStash(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := plumbing.ReferenceName(StashRefPrefix + name)
	if err := r.repo.Storer.RemoveReference(ref); err != nil {
		return &Error{Op: "drop", Path: ref.String(), Err: err}
	}
	return nil
}

// RestoreStash puts back the changes recorded by Stash in commit w (its
// hash, or the ref's name), byte for byte and with their modes, on top of
// whatever HEAD is now:
//
//   - Every path the user had changed in the work tree (W differs from
//     its first parent, the HEAD of the moment) gets the user's content
//     and mode back, or is removed if the user had deleted it; every other
//     file is left as it is.
//   - Every path the user had staged (I differs from that HEAD) gets the
//     user's index entry back, or none if the user had staged a deletion;
//     every other index entry is left as it is.
//
// It returns the paths the user had changed that HEAD has changed since
// (the run committed them too): there the user's version is in the work
// tree and the run's in its commits. RestoreStash is idempotent, so a
// crash half-way is put right by calling it again; it does not drop the
// ref.
func (r *Repo) RestoreStash(ctx context.Context, w string) (overlap []string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() ([]string, error) { return r.restoreStash(ctx, w) })
}

func (r *Repo) restoreStash(ctx context.Context, rev string) ([]string, error) {
	st, err := r.readStash(ctx, rev)
	if err != nil {
		return nil, err
	}
	overlap, err := r.restoreWorkTree(st)
	if err != nil {
		return nil, err
	}
	if err := r.restoreIndex(st); err != nil {
		return nil, err
	}
	return overlap, nil
}

// stashFiles are the files of a stash commit's trees: the HEAD it was
// made on (base), the user's index (staged), the user's work tree (work),
// and the HEAD of now (head; none on an unborn branch).
type stashFiles struct {
	base, staged, work, head map[string]treeFile
}

// readStash reads the files of stash commit rev and of HEAD.
func (r *Repo) readStash(ctx context.Context, rev string) (stashFiles, error) {
	var st stashFiles
	wc, err := r.resolve(rev)
	if err != nil {
		return st, err
	}
	if len(wc.ParentHashes) != 2 {
		return st, &Error{Op: "restore", Path: rev, Err: fmt.Errorf("not a stash commit: %d parents", len(wc.ParentHashes))}
	}
	if st.base, err = r.filesAt(ctx, wc.ParentHashes[0]); err != nil {
		return st, err
	}
	if st.staged, err = r.filesAt(ctx, wc.ParentHashes[1]); err != nil {
		return st, err
	}
	if st.work, err = r.commitFiles(ctx, wc); err != nil {
		return st, err
	}
	st.head = map[string]treeFile{}
	if h, ok, err := r.headOrZero(); err != nil {
		return st, err
	} else if ok {
		if st.head, err = r.filesAt(ctx, h); err != nil {
			return st, err
		}
	}
	return st, nil
}

// filesAt returns the files of commit h.
func (r *Repo) filesAt(ctx context.Context, h plumbing.Hash) (map[string]treeFile, error) {
	c, err := r.commitObject(h.String(), h)
	if err != nil {
		return nil, err
	}
	return r.commitFiles(ctx, c)
}

// fileChanged says whether p differs between a and b (content, mode, or
// being there at all).
func fileChanged(a, b map[string]treeFile, p string) bool {
	x, inA := a[p]
	y, inB := b[p]
	return inA != inB || x != y
}

// restoreWorkTree gives every path the user had changed in the work tree
// the user's version back, and returns those that HEAD has changed since.
func (r *Repo) restoreWorkTree(st stashFiles) (overlap []string, err error) {
	for _, p := range unionKeys(st.base, st.work) {
		if !fileChanged(st.base, st.work, p) {
			continue
		}
		if fileChanged(st.base, st.head, p) {
			overlap = append(overlap, p)
		}
		if err := r.restoreWorkFile(p, st.work); err != nil {
			return nil, err
		}
	}
	return overlap, nil
}

// restoreIndex gives every path the user had staged the user's index
// entry back (none for a staged deletion), and writes the index.
func (r *Repo) restoreIndex(st stashFiles) error {
	idx, _, err := r.readIndex()
	if err != nil {
		return err
	}
	entries := indexByPath(idx)
	for _, p := range unionKeys(st.base, st.staged) {
		if !fileChanged(st.base, st.staged, p) {
			continue
		}
		tf, ok := st.staged[p]
		if !ok {
			delete(entries, p)
			continue
		}
		stageEntry(entries, p, r.stagedEntry(p, tf, st.work))
	}
	out := make([]*index.Entry, 0, len(entries))
	for _, p := range sortedKeys(entries) {
		out = append(out, entries[p])
	}
	return r.writeIndex(out)
}

// stagedEntry is the index entry of staged file tf at p: with the work
// tree's stat data when the work tree holds the same file, without (git
// then re-reads the file) otherwise.
func (r *Repo) stagedEntry(p string, tf treeFile, work map[string]treeFile) *index.Entry {
	if wf, ok := work[p]; ok && wf == tf {
		fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p)))
		if err == nil {
			return newEntry(p, tf.hash, tf.mode, fi)
		}
	}
	return newEntry(p, tf.hash, tf.mode, nil) // git re-reads the file
}

// stageEntry puts e at p in entries: a staged file replaces a directory
// of entries, and the reverse.
func stageEntry(entries map[string]*index.Entry, p string, e *index.Entry) {
	entries[p] = e
	for q := range entries {
		if strings.HasPrefix(q, p+"/") {
			delete(entries, q)
		}
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		delete(entries, d)
	}
}

// restoreWorkFile makes the work tree's p what want has (or removes it).
func (r *Repo) restoreWorkFile(p string, want map[string]treeFile) error {
	abs := filepath.Join(r.root, filepath.FromSlash(p))
	tf, ok := want[p]
	if !ok {
		if err := os.Remove(abs); err != nil && !isNotExist(err) {
			return &Error{Op: "restore", Path: p, Err: err}
		}
		return nil
	}
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		if err := removeEmptyTree(abs); err != nil {
			return &Error{Op: "restore", Path: p, Err: err}
		}
	}
	data, err := r.blob(tf.hash)
	if err != nil {
		return err
	}
	if err := writeWorkFile(abs, data, tf.mode); err != nil {
		return &Error{Op: "restore", Path: p, Err: err}
	}
	return nil
}
