package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// ResetTo undoes a failed attempt: it makes the work tree, the index and
// HEAD's branch what they were at commit, keeping the user's files. It is
// `git reset --hard COMMIT` followed by removing what the attempt created,
// without go-git's hard reset, which deletes untracked and ignored files.
//
//   - HEAD's branch (or a detached HEAD) is moved to commit.
//   - Every file of commit is restored to its content and mode; files
//     that already match are not rewritten.
//   - Every other file that is not ignored is removed, whether the attempt
//     committed it, staged it or just created it — except the paths in
//     keep (files, or directories for everything under them): the
//     untracked files snapshotted with Untracked before the phase.
//   - Ignored files are never touched, judged by the ignore rules that
//     hold after the reset: commit's .gitignore files, kept ones,
//     .git/info/exclude and core.excludesFile. Nested repositories are
//     never touched either. A kept path that commit also has is left as
//     it is.
//   - Directories left empty by the removals are removed.
//   - The index becomes commit's tree.
//
// When a directory stands where commit has a file (or a file where commit
// has a directory) and cannot be cleared without touching an ignored or
// kept file, ResetTo returns a *ResetConflictError before changing
// anything. Files are replaced by renaming a complete temporary file over
// them, the index is written under index.lock and the branch moved last,
// so a reset interrupted at any point can simply be run again: it is
// idempotent, and a resumed run that finds a dirty tree at the pre-phase
// commit (HEAD already there) gets the same cleanup. Content filters
// (core.autocrlf, LFS) are not applied: files are written as stored.
func (r *Repo) ResetTo(ctx context.Context, commit string, keep []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := retry(r, func() (struct{}, error) { return struct{}{}, r.resetTo(ctx, commit, keep) })
	return err
}

func (r *Repo) resetTo(ctx context.Context, commit string, keep []string) error {
	target, err := r.resolve(commit)
	if err != nil {
		return err
	}
	want, err := r.commitFiles(ctx, target)
	if err != nil {
		return err
	}
	oldHead, _, err := r.headOrZero()
	if err != nil {
		return err
	}
	idx, idxTime, err := r.readIndex()
	if err != nil {
		return err
	}
	cc := r.coreConfig()
	rs := &reset{r: r, want: want, kept: newPathSet(keep), cc: cc, idx: indexByPath(idx), idxTime: idxTime}
	if err := rs.plan(ctx); err != nil {
		return err
	}
	if err := r.at("reset:apply"); err != nil {
		return err
	}
	entries, err := rs.apply(ctx)
	if err != nil {
		return err
	}
	if err := r.at("reset:index"); err != nil {
		return err
	}
	if err := r.writeIndex(entries); err != nil {
		return err
	}
	r.clearOperationState()
	if err := r.at("reset:ref"); err != nil {
		return err
	}
	if oldHead != target.Hash {
		return r.setHead(oldHead, target.Hash, r.author(), "reset: moving to "+target.Hash.String())
	}
	return nil
}

// clearOperationState ends a merge, cherry-pick or revert the attempt left
// in progress, as `git reset --hard` does.
func (r *Repo) clearOperationState() {
	for _, name := range []string{"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		_ = os.Remove(filepath.Join(r.gitDir, name))
	}
}

// reset is one ResetTo: planned first (nothing is changed until the plan
// is known to be possible), then applied.
type reset struct {
	r       *Repo
	want    map[string]treeFile
	kept    pathSet
	cc      coreConfig
	idx     map[string]*index.Entry
	idxTime time.Time

	remove    map[string]bool // files and links to delete
	clearDirs []string        // directories standing where want has a file
}

// plan finds what to delete and checks that every file of the target can
// be written.
func (rs *reset) plan(ctx context.Context) error {
	r := rs.r
	rs.remove = map[string]bool{}
	w := &walker{
		root:       r.root,
		base:       r.basePatterns(rs.cc),
		ignoreFile: rs.ignoreFile,
		n:          &r.counts,
		file: func(rel string) error {
			if _, ok := rs.want[rel]; !ok && !rs.kept.has(rel) {
				rs.remove[rel] = true
			}
			return nil
		},
	}
	if err := w.run(ctx); err != nil {
		return &Error{Op: "reset", Path: r.root, Err: err}
	}
	lst := newLstater(r.root)
	dirOK := map[string]bool{}
	for _, p := range sortedKeys(rs.want) {
		if err := rs.checkParents(lst, dirOK, p); err != nil {
			return err
		}
		fi, err := lst.lstat(p)
		if err != nil || !fi.IsDir() {
			continue
		}
		blocked, err := rs.blockers(p)
		if err != nil {
			return err
		}
		if len(blocked) > 0 {
			return &ResetConflictError{Path: p, Blocked: blocked}
		}
		rs.clearDirs = append(rs.clearDirs, p)
	}
	return nil
}

// ignoreFile gives the walk the .gitignore files that hold after the
// reset: the target's own, or a kept one on disk.
func (rs *reset) ignoreFile(dir string) ([]byte, error) {
	p := path.Join(dir, ".gitignore")
	if tf, ok := rs.want[p]; ok {
		if !tf.mode.IsRegular() {
			return nil, nil
		}
		return rs.r.blob(tf.hash)
	}
	if rs.kept.has(p) {
		return diskIgnoreFile(rs.r.root)(dir)
	}
	return nil, nil
}

// checkParents fails when a leading directory of p is held by a file
// (or a symbolic link) that the reset may not remove. Directories found
// fine are remembered in ok.
func (rs *reset) checkParents(lst *lstater, ok map[string]bool, p string) error {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if ok[d] {
			continue
		}
		fi, err := os.Lstat(lst.abs(d))
		if err != nil {
			return nil // missing: created when p is written
		}
		if fi.IsDir() {
			ok[d] = true
			continue
		}
		if !rs.remove[d] {
			return &ResetConflictError{Path: p, Blocked: []string{d}}
		}
		return nil
	}
	return nil
}

// blockers lists (up to ten of) the files under dir that the reset may
// not remove.
func (rs *reset) blockers(dir string) ([]string, error) {
	var out []string
	root := rs.r.root
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !rs.remove[rel] {
			out = append(out, rel)
			if len(out) == 10 {
				return fs.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return nil, &Error{Op: "reset", Path: dir, Err: err}
	}
	return out, nil
}

// apply carries the plan out and returns the index entries of the target.
func (rs *reset) apply(ctx context.Context) ([]*index.Entry, error) {
	root := rs.r.root
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	emptied := map[string]bool{}
	for _, rel := range sortedKeys(rs.remove) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := os.Remove(abs(rel)); err != nil && !isNotExist(err) {
			return nil, &Error{Op: "remove", Path: rel, Err: err}
		}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			emptied[d] = true
		}
	}
	for _, d := range rs.clearDirs {
		if err := removeEmptyTree(abs(d)); err != nil {
			return nil, &Error{Op: "remove", Path: d, Err: err}
		}
	}
	rs.pruneDirs(emptied)
	if err := rs.r.at("reset:restore"); err != nil {
		return nil, err
	}
	entries := make([]*index.Entry, 0, len(rs.want))
	sc := &scanner{lst: rs.r.lstater(), fileMode: rs.cc.fileMode, idxTime: rs.idxTime}
	for i, p := range sortedKeys(rs.want) {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e, err := rs.restore(sc, p, rs.want[p])
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// restore makes the work tree's p the target's file and returns its index
// entry.
func (rs *reset) restore(sc *scanner, p string, tf treeFile) (*index.Entry, error) {
	if tf.mode == filemode.Submodule {
		return newEntry(p, tf.hash, tf.mode, nil), nil
	}
	abs := sc.lst.abs(p)
	ie := rs.idx[p]
	if ie != nil && (ie.Hash != tf.hash || ie.Mode != tf.mode) {
		ie = nil // the index's stat data vouches for another content
	}
	v, ok, err := sc.current(p, ie)
	if err != nil {
		return nil, &Error{Op: "reset", Path: p, Err: err}
	}
	if ok && rs.kept.has(p) {
		return newEntry(p, tf.hash, tf.mode, nil), nil // never touch a kept file
	}
	if ok && v.hash == tf.hash {
		if v.mode == tf.mode {
			if v.data == nil {
				return ie, nil
			}
			return newEntry(p, tf.hash, tf.mode, v.info), nil
		}
		if v.mode != filemode.Symlink && tf.mode != filemode.Symlink {
			if err := os.Chmod(abs, execPerm(v.info.Mode().Perm(), tf.mode == filemode.Executable)); err != nil {
				return nil, &Error{Op: "chmod", Path: p, Err: err}
			}
			return rs.entryFromDisk(p, abs, tf)
		}
	}
	data, err := rs.r.blob(tf.hash)
	if err != nil {
		return nil, err
	}
	if err := writeWorkFile(abs, data, tf.mode); err != nil {
		return nil, &Error{Op: "write", Path: p, Err: err}
	}
	return rs.entryFromDisk(p, abs, tf)
}

func (rs *reset) entryFromDisk(p, abs string, tf treeFile) (*index.Entry, error) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, &Error{Op: "reset", Path: p, Err: err}
	}
	return newEntry(p, tf.hash, tf.mode, fi), nil
}

// pruneDirs removes the directories that removals left empty, deepest
// first, except those the target has files in.
func (rs *reset) pruneDirs(candidates map[string]bool) {
	needed := map[string]bool{}
	for p := range rs.want {
		for d := path.Dir(p); d != "." && !needed[d]; d = path.Dir(d) {
			needed[d] = true
		}
	}
	dirs := make([]string, 0, len(candidates))
	for d := range candidates {
		if !needed[d] {
			dirs = append(dirs, d)
		}
	}
	sort.Slice(dirs, func(i, j int) bool {
		if a, b := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/"); a != b {
			return a > b
		}
		return dirs[i] < dirs[j]
	})
	for _, d := range dirs {
		abs := filepath.Join(rs.r.root, filepath.FromSlash(d))
		if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
			_ = os.Remove(abs) // fails, harmlessly, unless empty
		}
	}
}

// removeEmptyTree removes a directory that holds only directories.
func removeEmptyTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			return fmt.Errorf("%s still holds %s", dir, e.Name())
		}
		if err := removeEmptyTree(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}

// writeWorkFile replaces abs with a file (or symbolic link) of the given
// content and mode by renaming a complete temporary file over it, creating
// parent directories as needed. New files get 0666 or 0777 less the umask,
// as git gives them.
func writeWorkFile(abs string, data []byte, mode filemode.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
		return err
	}
	if mode == filemode.Symlink {
		return replaceWithSymlink(abs, string(data))
	}
	perm := os.FileMode(0o666)
	if mode == filemode.Executable {
		perm = 0o777
	}
	f, err := atomicfile.CreateTemp(abs, perm)
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func replaceWithSymlink(abs, target string) error {
	f, err := atomicfile.CreateTemp(abs, 0o600)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_ = f.Close()
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// execPerm sets or clears the executable bits of perm, giving execute to
// whoever may read.
func execPerm(perm os.FileMode, exec bool) os.FileMode {
	if exec {
		return perm | (perm&0o444)>>2
	}
	return perm &^ 0o111
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
