package workspace

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// snapCache keeps what the last snapshot decoded, so that the next one,
// when HEAD's tree and the index file are unchanged (the common case
// between the checks of one phase), costs no decoding: HEAD's files
// flattened, the index's entries by path, and their sorted union. Every
// map and entry in it is read only once cached. A Repo's mutex guards it.
type snapCache struct {
	tree      plumbing.Hash
	head      map[string]treeFile
	headTrees map[plumbing.Hash]struct{}

	// idxSum is the index file's trailing checksum (of all its
	// content) and idxSize its size; a zero sum is never trusted (git's
	// index.skipHash writes one).
	idxSum  [20]byte
	idxSize int64
	idx     *index.Index
	byPath  map[string]*index.Entry

	union []string // sorted keys of head and byPath; nil until computed
}
