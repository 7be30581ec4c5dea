package workspace

import (
	"context"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Status is the work tree compared with HEAD, the index deciding only which
// files are tracked: a change counts whether it is staged or not. Paths are
// slash separated, relative to the root, and sorted. Ignored files are
// never listed.
type Status struct {
	Modified  []string // at HEAD and tracked, with other content or mode
	Added     []string // tracked (in the index) but not at HEAD
	Deleted   []string // at HEAD, but gone from the work tree or from the index
	Untracked []string // neither tracked nor ignored; a nested repository is "dir/"
}

// IsClean reports whether there is nothing to commit and nothing
// untracked: what `git status --porcelain` prints nothing for.
func (s Status) IsClean() bool {
	return len(s.Modified)+len(s.Added)+len(s.Deleted)+len(s.Untracked) == 0
}

// String lists the changes one per line, "M path", "A path", "D path" or
// "? path", in that order; it is empty for a clean tree.
func (s Status) String() string {
	var b strings.Builder
	for _, g := range []struct {
		mark  string
		paths []string
	}{{"M", s.Modified}, {"A", s.Added}, {"D", s.Deleted}, {"?", s.Untracked}} {
		for _, p := range g.paths {
			b.WriteString(g.mark + " " + p + "\n")
		}
	}
	return b.String()
}

// snapshot is what Status and Commit compare: HEAD's files, the index and
// a scanner for the work tree.
type snapshot struct {
	headHash plumbing.Hash // zero on an unborn branch
	headTree plumbing.Hash
	head     map[string]treeFile
	// headTrees holds the hash of every tree of HEAD's (the repository
	// has them all).
	headTrees map[plumbing.Hash]struct{}
	idx       map[string]*index.Entry
	sc        *scanner
	cc        coreConfig
	// cached says head and idx are r.snaps's, whose union r.paths keeps.
	cached bool
}

func (r *Repo) snapshot(ctx context.Context) (*snapshot, error) {
	s := &snapshot{head: map[string]treeFile{}, headTree: plumbing.NewHash(emptyTree), cc: r.coreConfig()}
	h, ok, err := r.headOrZero()
	if err != nil {
		return nil, err
	}
	c := &r.snaps
	if ok {
		cm, err := r.commitObject("HEAD", h)
		if err != nil {
			return nil, err
		}
		if c.head == nil || c.tree != cm.TreeHash {
			seen := map[plumbing.Hash]struct{}{}
			files, err := r.treeFilesSeen(ctx, cm.TreeHash, seen)
			if err != nil {
				return nil, err
			}
			c.tree, c.head, c.headTrees, c.union = cm.TreeHash, files, seen, nil
		}
		s.head, s.headTrees = c.head, c.headTrees
		s.headHash, s.headTree = h, cm.TreeHash
	}
	idx, idxTime, cached, err := r.indexEntries()
	if err != nil {
		return nil, err
	}
	s.idx, s.cached = idx, cached && ok
	s.sc = &scanner{lst: r.lstater(), fileMode: s.cc.fileMode, idxTime: idxTime}
	return s, nil
}

// paths returns the sorted union of HEAD's and the index's paths; it is
// shared and must not be changed.
func (r *Repo) paths(s *snapshot) []string {
	c := &r.snaps
	if !s.cached {
		return unionKeys(s.head, s.idx)
	}
	if c.union == nil {
		c.union = unionKeys(s.head, s.idx)
	}
	return c.union
}

// untracked walks the work tree for files that are neither in the index
// nor ignored, leaving out this package's temporary files. Nested
// repositories that are not submodules come back as "dir/" in nested.
func (r *Repo) untracked(ctx context.Context, idx map[string]*index.Entry, cc coreConfig, skip pathSet) (files, nested []string, err error) {
	w := &walker{
		root:       r.root,
		base:       r.basePatterns(cc),
		ignoreFile: diskIgnoreFile(r.root),
		diskIgnore: true,
		skip:       skip,
		n:          &r.counts,
		tracked:    idx,
		file: func(rel string) error {
			if _, tracked := idx[rel]; !tracked && !isTempName(rel) {
				files = append(files, rel)
			}
			return nil
		},
		nested: func(rel string) error {
			if e, ok := idx[rel]; !ok || e.Mode != filemode.Submodule {
				nested = append(nested, rel+"/")
			}
			return nil
		},
	}
	if err := w.run(ctx); err != nil {
		return nil, nil, &Error{Op: "walk", Path: r.root, Err: err}
	}
	return files, nested, nil
}

// Status compares the work tree with HEAD. It reads every directory that
// is not ignored and every tracked file whose stat data no longer matches
// the index, so its cost grows with the size of the tree, like `git
// status` without a file system monitor.
func (r *Repo) Status(ctx context.Context) (Status, error) {
	return r.StatusOutside(ctx, nil)
}

// StatusOutside is Status leaving out skip (files, or directories for
// everything under them): what is there is neither stat'ed, read nor
// listed, and nothing under them is reported. A caller that ignores
// changes under a directory (the workflow, its execution directory) pays
// only for the rest of the tree.
func (r *Repo) StatusOutside(ctx context.Context, skip []string) (Status, error) {
	if err := ctx.Err(); err != nil {
		return Status{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() (Status, error) { return r.status(ctx, newPathSet(skip)) })
}

func (r *Repo) status(ctx context.Context, skip pathSet) (Status, error) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		return Status{}, err
	}
	var st Status
	paths := r.paths(snap)
	snap.sc.preload(paths, snap.idx, func(p string) bool {
		_, inHead := snap.head[p]
		return inHead && !skip.has(p)
	})
	for i, p := range paths {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return Status{}, err
			}
		}
		if skip.has(p) {
			continue
		}
		hf, inHead := snap.head[p]
		ie, inIdx := snap.idx[p]
		switch {
		case !inHead:
			st.Added = append(st.Added, p)
		case !inIdx:
			st.Deleted = append(st.Deleted, p)
		default:
			v, ok, err := snap.sc.current(p, ie)
			if err != nil {
				return Status{}, &Error{Op: "status", Path: p, Err: err}
			}
			switch {
			case !ok:
				st.Deleted = append(st.Deleted, p)
			case ie.Hash != hf.hash || ie.Mode != hf.mode || v.hash != ie.Hash || v.mode != ie.Mode:
				st.Modified = append(st.Modified, p)
			}
		}
	}
	files, nested, err := r.untracked(ctx, snap.idx, snap.cc, skip)
	if err != nil {
		return Status{}, err
	}
	st.Untracked = append(files, nested...)
	sort.Strings(st.Untracked)
	return st, nil
}

// Untracked returns the files that are neither tracked nor ignored (nested
// repositories as "dir/"), sorted: what a phase must leave alone. The
// workflow takes this snapshot before a phase and passes it to Commit as
// CommitOptions.Exclude and to ResetTo as keep.
func (r *Repo) Untracked(ctx context.Context) ([]string, error) {
	return r.UntrackedOutside(ctx, nil)
}

// UntrackedOutside is Untracked leaving out skip, which is not listed (see
// StatusOutside).
func (r *Repo) UntrackedOutside(ctx context.Context, skip []string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	idx, _, _, err := r.indexEntries()
	if err != nil {
		return nil, err
	}
	files, nested, err := r.untracked(ctx, idx, r.coreConfig(), newPathSet(skip))
	if err != nil {
		return nil, err
	}
	out := append(files, nested...)
	sort.Strings(out)
	return out, nil
}

// unionKeys returns the keys of a and b, sorted.
func unionKeys[A, B any](a map[string]A, b map[string]B) []string {
	out := make([]string, 0, len(a)+len(b))
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
