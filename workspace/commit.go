package workspace

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitOptions tunes Commit.
type CommitOptions struct {
	// Author signs the commit as author and committer; zero means Author().
	Author Signature
	// When is the commit's time; zero means now.
	When time.Time
	// AllowEmpty lets Commit make a commit whose tree equals HEAD's.
	AllowEmpty bool
	// Exclude lists paths (files, or directories for everything under
	// them) that are never staged: they stay as HEAD has them, and one
	// that is not at HEAD stays untracked even if it was staged. The
	// workflow passes the files that were untracked before the phase.
	Exclude []string
	// Check, when set, is called once the commit's files are known and
	// before anything but objects is written: changed lists, sorted,
	// every path whose content or mode the commit changes from HEAD;
	// file and head give a path's blob hash in the commit and at HEAD
	// ("" for none). An error stops the commit, which changes nothing:
	// the workflow's last look at what it commits costs no second walk
	// of the tree.
	Check func(changed []string, file, head func(path string) string) error
}

// Commit stages every change of the work tree — new, modified and deleted
// files, the executable bit, symbolic links — except ignored files, this
// package's temporary files and opts.Exclude, then commits it on HEAD's
// branch with msg and the trailers as a git trailer block, and returns the
// new commit's hash. It is `git add -A && git commit`, with the index
// written under index.lock and the branch moved under its ref lock only if
// it has not moved since Commit read it. A tree equal to HEAD's is refused
// with ErrNothingToCommit unless opts.AllowEmpty; a blank message with
// ErrEmptyMessage, a bad trailer with ErrInvalidTrailer. Each new file is
// held in memory while it is stored.
func (r *Repo) Commit(ctx context.Context, msg string, trailers []Trailer, opts CommitOptions) (string, error) {
	message, err := FormatMessage(msg, trailers)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() (string, error) { return r.commitAll(ctx, message, opts) })
}

func (r *Repo) commitAll(ctx context.Context, message string, opts CommitOptions) (string, error) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		return "", err
	}
	entries, err := r.stage(ctx, snap, newPathSet(opts.Exclude))
	if err != nil {
		return "", err
	}
	made := map[plumbing.Hash]struct{}{}
	tree, err := r.writeTree(entries, snap.headTrees, made)
	if err != nil {
		return "", err
	}
	if opts.Check != nil {
		if err := checkCommit(snap, entries, opts.Check); err != nil {
			return "", err
		}
	}
	if tree == snap.headTree && !opts.AllowEmpty {
		return "", ErrNothingToCommit
	}
	sig := opts.Author
	if sig.IsZero() {
		sig = r.author()
	}
	when := opts.When
	if when.IsZero() {
		when = r.now()
	}
	osig := object.Signature{Name: sanitizeIdent(sig.Name), Email: sanitizeIdent(sig.Email), When: when}
	c := &object.Commit{Author: osig, Committer: osig, Message: message, TreeHash: tree}
	reflog := "commit (initial): "
	if !snap.headHash.IsZero() {
		c.ParentHashes = []plumbing.Hash{snap.headHash}
		reflog = "commit: "
	}
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", &Error{Op: "commit", Path: r.root, Err: err}
	}
	h, err := r.store(obj)
	if err != nil {
		return "", err
	}
	// Index first, branch last: a crash in between leaves HEAD where it
	// was with the changes staged, which a resumed run sees as a dirty
	// tree and resets.
	if err := r.at("commit:index"); err != nil {
		return "", err
	}
	if err := r.writeIndex(entries); err != nil {
		return "", err
	}
	if err := r.at("commit:ref"); err != nil {
		return "", err
	}
	subject, _, _ := strings.Cut(message, "\n")
	if err := r.setHead(snap.headHash, h, sig, reflog+subject); err != nil {
		return "", err
	}
	// The new HEAD's files are the entries just written, and its trees
	// the ones writeTree made: the next snapshot need not read them.
	files := make(map[string]treeFile, len(entries))
	for _, e := range entries {
		files[e.Name] = treeFile{hash: e.Hash, mode: e.Mode}
	}
	r.snaps.tree, r.snaps.head, r.snaps.headTrees, r.snaps.union = tree, files, made, nil
	return h.String(), nil
}

// stage builds the index of the next commit: every tracked file as it is
// in the work tree (gone if deleted), every untracked file that is not
// ignored, excluded paths as HEAD has them. New content is stored as blobs.
func (r *Repo) stage(ctx context.Context, snap *snapshot, excl pathSet) ([]*index.Entry, error) {
	var entries []*index.Entry
	paths := r.paths(snap)
	snap.sc.preload(paths, snap.idx, func(p string) bool { return !excl.has(p) })
	for i, p := range paths {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		hf, inHead := snap.head[p]
		ie, inIdx := snap.idx[p]
		if excl.has(p) {
			switch {
			case inHead && inIdx && ie.Hash == hf.hash && ie.Mode == hf.mode:
				entries = append(entries, ie)
			case inHead:
				entries = append(entries, newEntry(p, hf.hash, hf.mode, nil))
			}
			continue
		}
		if !inIdx {
			continue // removed from the index; a copy left in the tree is untracked
		}
		e, err := r.stageFile(snap, p, ie)
		if err != nil {
			return nil, err
		}
		if e != nil {
			entries = append(entries, e)
		}
	}
	files, _, err := r.untracked(ctx, snap.idx, snap.cc, nil)
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		if excl.has(p) {
			continue
		}
		e, err := r.stageFile(snap, p, nil)
		if err != nil {
			return nil, err
		}
		if e != nil {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// stageFile returns the index entry for the work tree's p, storing its
// content when it changed; nil when p is gone.
func (r *Repo) stageFile(snap *snapshot, p string, ie *index.Entry) (*index.Entry, error) {
	v, ok, err := snap.sc.current(p, ie)
	if err != nil {
		return nil, &Error{Op: "commit", Path: p, Err: err}
	}
	if !ok {
		return nil, nil
	}
	if v.data == nil {
		return ie, nil // the index's stat data vouches for it
	}
	if _, err := r.storeBlob(v.data); err != nil {
		return nil, err
	}
	return newEntry(p, v.hash, v.mode, v.info), nil
}

// sanitizeIdent drops what would break a commit header.
func sanitizeIdent(s string) string {
	return strings.TrimSpace(strings.Map(func(c rune) rune {
		switch c {
		case '<', '>', '\n', '\r', 0:
			return -1
		}
		return c
	}, s))
}

// checkCommit calls check with what the commit of entries changes from
// snap's HEAD (see CommitOptions.Check).
func checkCommit(snap *snapshot, entries []*index.Entry, check func(changed []string, file, head func(string) string) error) error {
	files := make(map[string]treeFile, len(entries))
	var changed []string
	for _, e := range entries {
		files[e.Name] = treeFile{hash: e.Hash, mode: e.Mode}
		if hf, ok := snap.head[e.Name]; !ok || hf.hash != e.Hash || hf.mode != e.Mode {
			changed = append(changed, e.Name)
		}
	}
	for p := range snap.head {
		if _, ok := files[p]; !ok {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	hash := func(m map[string]treeFile) func(string) string {
		return func(p string) string {
			if f, ok := m[p]; ok {
				return f.hash.String()
			}
			return ""
		}
	}
	return check(changed, hash(files), hash(snap.head))
}
