package workspace

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// FileStat is one file's change between two commits: lines added and
// deleted, as `git diff --numstat --no-renames A B` counts them. A binary
// file (a NUL byte in its first 8000 bytes, git's test) has Binary set and
// no line counts; a change of mode only has zero counts.
type FileStat struct {
	Path    string
	Added   int
	Deleted int
	Binary  bool
}

// String returns the numstat line: "ADDED\tDELETED\tPATH", with "-" counts
// for a binary file.
func (f FileStat) String() string {
	if f.Binary {
		return "-\t-\t" + f.Path
	}
	return fmt.Sprintf("%d\t%d\t%s", f.Added, f.Deleted, f.Path)
}

// DiffStat returns the files that differ between commits a and b, sorted
// by path. a may be "" for the empty tree (b's root commit, for instance).
// Renames are not detected: a moved file is one deletion and one
// addition. Counts come from a minimal line diff (Myers); for two very
// large and very different versions of a file the work is capped and the
// counts are then an estimate from the lines the versions share.
func (r *Repo) DiffStat(ctx context.Context, a, b string) ([]FileStat, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() ([]FileStat, error) { return r.diffStat(ctx, a, b) })
}

func (r *Repo) diffStat(ctx context.Context, a, b string) ([]FileStat, error) {
	from := map[string]treeFile{}
	if a != "" {
		ca, err := r.resolve(a)
		if err != nil {
			return nil, err
		}
		if from, err = r.commitFiles(ctx, ca); err != nil {
			return nil, err
		}
	}
	cb, err := r.resolve(b)
	if err != nil {
		return nil, err
	}
	to, err := r.commitFiles(ctx, cb)
	if err != nil {
		return nil, err
	}
	var out []FileStat
	for _, p := range unionKeys(from, to) {
		fa, inA := from[p]
		fb, inB := to[p]
		if inA && inB && fa == fb {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := FileStat{Path: p}
		if !(inA && inB && fa.hash == fb.hash) { // not a mode-only change
			da, err := r.content(fa, inA)
			if err != nil {
				return nil, err
			}
			db, err := r.content(fb, inB)
			if err != nil {
				return nil, err
			}
			if isBinary(da) || isBinary(db) {
				st.Binary = true
			} else {
				st.Added, st.Deleted = lineChanges(ctx, da, db)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// content is what git diffs for a tree file: a blob's bytes, or a
// submodule's "Subproject commit" line.
func (r *Repo) content(f treeFile, ok bool) ([]byte, error) {
	switch {
	case !ok:
		return nil, nil
	case f.mode == filemode.Submodule:
		return []byte("Subproject commit " + f.hash.String() + "\n"), nil
	default:
		return r.blob(f.hash)
	}
}

// isBinary is git's test: a NUL byte among the first 8000.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// splitLines numbers the lines of a and b (a line keeps its newline, so a
// last line without one differs from the same text with one).
func splitLines(a, b []byte) (la, lb []int) {
	ids := map[string]int{}
	split := func(data []byte) []int {
		var out []int
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n') + 1
			if i == 0 {
				i = len(data)
			}
			id, ok := ids[string(data[:i])]
			if !ok {
				id = len(ids)
				ids[string(data[:i])] = id
			}
			out = append(out, id)
			data = data[i:]
		}
		return out
	}
	return split(a), split(b)
}

// maxDiffCost bounds the Myers search (about (N+M)·D steps).
const maxDiffCost = 200_000_000

// lineChanges returns how many lines b adds to a and deletes from it in a
// minimal line diff.
func lineChanges(ctx context.Context, a, b []byte) (added, deleted int) {
	la, lb := splitLines(a, b)
	for len(la) > 0 && len(lb) > 0 && la[0] == lb[0] {
		la, lb = la[1:], lb[1:]
	}
	for len(la) > 0 && len(lb) > 0 && la[len(la)-1] == lb[len(lb)-1] {
		la, lb = la[:len(la)-1], lb[:len(lb)-1]
	}
	n, m := len(la), len(lb)
	if n == 0 || m == 0 {
		return m, n
	}
	d, ok := editDistance(ctx, la, lb)
	if !ok {
		common := sharedLines(la, lb)
		return m - common, n - common
	}
	// d = added + deleted and m - n = added - deleted.
	return (d + m - n) / 2, (d - m + n) / 2
}

// editDistance is the length of the shortest edit script (insertions and
// deletions) from a to b, by Myers' greedy algorithm; ok is false when
// the search was cut short by maxDiffCost or ctx.
func editDistance(ctx context.Context, a, b []int) (int, bool) {
	n, m := len(a), len(b)
	maxD := n + m
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	cost := 0
	for d := 0; d <= maxD; d++ {
		if d%64 == 0 && ctx.Err() != nil {
			return 0, false
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return d, true
			}
		}
		if cost += 2*d + n + m; cost > maxDiffCost {
			return 0, false
		}
	}
	return maxD, true
}

// sharedLines counts the lines a and b have in common as multisets, an
// upper bound of their longest common subsequence.
func sharedLines(a, b []int) int {
	count := map[int]int{}
	for _, x := range a {
		count[x]++
	}
	common := 0
	for _, y := range b {
		if count[y] > 0 {
			count[y]--
			common++
		}
	}
	return common
}
