package workspace

import (
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeFile is one file of a tree: its blob (or a submodule's commit) and
// its mode.
type treeFile struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

// emptyTree is the hash of the tree with no entries.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// maxTreeDepth bounds recursion on corrupt or hostile trees.
const maxTreeDepth = 1024

// treeFiles flattens a tree into its files by slash path. Unlike go-git's
// tree walker it fails on a missing subtree instead of skipping it (a
// reset must never take "missing" for "not in the commit"), and it rejects
// names that could leave the work tree or write into .git.
func (r *Repo) treeFiles(ctx context.Context, h plumbing.Hash) (map[string]treeFile, error) {
	return r.treeFilesSeen(ctx, h, nil)
}

// treeFilesSeen is treeFiles, adding the hash of every tree it went
// through (h included) to seen when seen is not nil.
func (r *Repo) treeFilesSeen(ctx context.Context, h plumbing.Hash, seen map[plumbing.Hash]struct{}) (map[string]treeFile, error) {
	out := map[string]treeFile{}
	if h.String() == emptyTree {
		return out, nil
	}
	if err := r.readTree(ctx, h, "", 0, out, seen); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *Repo) readTree(ctx context.Context, h plumbing.Hash, prefix string, depth int, out map[string]treeFile, seen map[plumbing.Hash]struct{}) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("%w: tree deeper than %d levels at %q", ErrUnsafePath, maxTreeDepth, prefix)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := r.treeEntries(h, prefix)
	if err != nil {
		return err
	}
	if seen != nil {
		seen[h] = struct{}{}
	}
	for _, e := range entries {
		p := path.Join(prefix, e.Name)
		if e.Mode == filemode.Dir {
			if err := r.readTree(ctx, e.Hash, p, depth+1, out, seen); err != nil {
				return err
			}
			continue
		}
		out[p] = treeFile{hash: e.Hash, mode: e.Mode}
	}
	return nil
}

// treeEntries returns the entries of tree h (at prefix, for messages),
// every name checked with safeName, from the cache when it was read
// before: a tree's hash is its content, so a tree once read never needs
// reading again, and flattening a commit that changed one directory reads
// only the trees on that directory's path.
func (r *Repo) treeEntries(h plumbing.Hash, prefix string) ([]object.TreeEntry, error) {
	if es, ok := r.trees.get(h); ok {
		return es, nil
	}
	r.counts.trees.Add(1)
	t, err := object.GetTree(r.repo.Storer, h)
	if err != nil {
		return nil, &Error{Op: "read tree", Path: prefix + " (" + h.String() + ")", Err: err}
	}
	for _, e := range t.Entries {
		if !safeName(e.Name) {
			return nil, fmt.Errorf("%w: %q", ErrUnsafePath, path.Join(prefix, e.Name))
		}
	}
	es := append([]object.TreeEntry(nil), t.Entries...)
	r.trees.put(h, es)
	return es, nil
}

// maxCachedTreeEntries bounds a treeCache: past it the cache starts again
// empty (at about 100 bytes an entry, some 25 MB).
const maxCachedTreeEntries = 1 << 18

// treeCache holds the entries of tree objects by hash. Its entries are
// never changed once put.
type treeCache struct {
	mu      sync.Mutex
	trees   map[plumbing.Hash][]object.TreeEntry
	entries int
}

func (c *treeCache) get(h plumbing.Hash) ([]object.TreeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	es, ok := c.trees[h]
	return es, ok
}

func (c *treeCache) put(h plumbing.Hash, es []object.TreeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trees == nil || c.entries+len(es) > maxCachedTreeEntries {
		c.trees, c.entries = map[plumbing.Hash][]object.TreeEntry{}, 0
	}
	if _, ok := c.trees[h]; !ok {
		c.trees[h] = es
		c.entries += len(es) + 1
	}
}

// commitFiles flattens a commit's tree.
func (r *Repo) commitFiles(ctx context.Context, c *object.Commit) (map[string]treeFile, error) {
	return r.treeFiles(ctx, c.TreeHash)
}

// safeName reports whether a tree entry name can be written in the work
// tree: one component, not "." or "..", not .git in any case.
func safeName(name string) bool {
	switch {
	case name == "", name == ".", name == "..":
		return false
	case strings.ContainsAny(name, "/\x00"):
		return false
	case strings.EqualFold(name, ".git"), strings.EqualFold(name, "git~1"):
		return false
	}
	return true
}

// store writes an object unless the repository has it already.
func (r *Repo) store(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	r.counts.stores.Add(1)
	if r.repo.Storer.HasEncodedObject(h) == nil {
		return h, nil
	}
	if _, err := r.repo.Storer.SetEncodedObject(obj); err != nil {
		return plumbing.ZeroHash, &Error{Op: "write object", Path: h.String(), Err: err}
	}
	return h, nil
}

// storeBlob writes data as a blob.
func (r *Repo) storeBlob(data []byte) (plumbing.Hash, error) {
	obj := r.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.store(obj)
}

// blob reads a blob's content.
func (r *Repo) blob(h plumbing.Hash) ([]byte, error) {
	b, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, &Error{Op: "read blob", Path: h.String(), Err: err}
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, &Error{Op: "read blob", Path: h.String(), Err: err}
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, &Error{Op: "read blob", Path: h.String(), Err: err}
	}
	return data, nil
}

// dirNode is a directory while a tree is built from index entries.
type dirNode struct {
	entries []object.TreeEntry
	dirs    map[string]*dirNode
}

// writeTree stores the trees for a set of index entries (stage 0, sorted or
// not) and returns the root tree's hash. Trees whose hash is in have (the
// trees of HEAD, which the repository holds) are not looked up or stored
// again; have may be nil. Every tree made is kept in the tree cache and,
// when made is not nil, its hash added to made: they are the new tree's.
func (r *Repo) writeTree(entries []*index.Entry, have, made map[plumbing.Hash]struct{}) (plumbing.Hash, error) {
	root := &dirNode{}
	for _, e := range entries {
		parts := strings.Split(e.Name, "/")
		n := root
		for _, d := range parts[:len(parts)-1] {
			if n.dirs == nil {
				n.dirs = map[string]*dirNode{}
			}
			c := n.dirs[d]
			if c == nil {
				c = &dirNode{}
				n.dirs[d] = c
			}
			n = c
		}
		n.entries = append(n.entries, object.TreeEntry{Name: parts[len(parts)-1], Mode: e.Mode, Hash: e.Hash})
	}
	return r.storeTree(root, have, made)
}

func (r *Repo) storeTree(n *dirNode, have, made map[plumbing.Hash]struct{}) (plumbing.Hash, error) {
	entries := append([]object.TreeEntry(nil), n.entries...)
	for name, c := range n.dirs {
		h, err := r.storeTree(c, have, made)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	obj := r.repo.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, &Error{Op: "write tree", Path: "", Err: err}
	}
	h := obj.Hash()
	if _, ok := have[h]; !ok {
		if _, err := r.store(obj); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	// The tree is in the repository now.
	if made != nil {
		made[h] = struct{}{}
	}
	if !slices.ContainsFunc(entries, func(e object.TreeEntry) bool { return !safeName(e.Name) }) {
		r.trees.put(h, entries) // as treeEntries would read it back
	}
	return h, nil
}
