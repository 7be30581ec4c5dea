package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// isNotExist reports whether err means the path is not there, including a
// leading component that is a file.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func isDirErr(err error) bool { return errors.Is(err, syscall.EISDIR) }

// lstater stats work tree paths without following a symbolic link in a
// leading directory (git treats "link/file" as missing when link is a
// symbolic link), remembering what it learnt about directories. Use it
// only while the tree is not being changed.
type lstater struct {
	root string
	dirs map[string]bool // slash path → is a real directory
	n    *ioCounts       // nil: not counted
	// pre and preRes are what preload found, in path order; preNext is
	// the first not yet taken. The lstats that follow a preload come in
	// the same (sorted) order, so each finds its result by moving on.
	pre     []string
	preRes  []lstatResult
	preNext int
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// preloadMin is the number of paths from which preload stats them on
// several goroutines; below it one goroutine is as fast.
const preloadMin = 1000

// preload stats paths (sorted) on several goroutines, as git's preload-index
// does, so that the lstat of each that follows (at most one) costs
// nothing: on a large tree the stats are most of a status's time, and
// each waits on the kernel alone. The parent directories are checked
// first, on this goroutine.
func (l *lstater) preload(paths []string) {
	workers := min(runtime.GOMAXPROCS(0), 8)
	if len(paths) < preloadMin || workers < 2 {
		return
	}
	todo := make([]string, 0, len(paths))
	for _, rel := range paths {
		if d := path.Dir(rel); d == "." || l.isDir(d) {
			todo = append(todo, rel)
		}
	}
	res := make([]lstatResult, len(todo))
	var wg sync.WaitGroup
	chunk := (len(todo) + workers - 1) / workers
	for w := 0; w < len(todo); w += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				res[i].fi, res[i].err = os.Lstat(l.abs(todo[i]))
			}
		}(w, min(w+chunk, len(todo)))
	}
	wg.Wait()
	for range todo {
		l.n.stat()
	}
	l.pre, l.preRes, l.preNext = todo, res, 0
}

// preloaded returns preload's result for rel, if it has one.
func (l *lstater) preloaded(rel string) (lstatResult, bool) {
	for l.preNext < len(l.pre) && l.pre[l.preNext] < rel {
		l.preNext++
	}
	if l.preNext < len(l.pre) && l.pre[l.preNext] == rel {
		l.preNext++
		return l.preRes[l.preNext-1], true
	}
	return lstatResult{}, false
}

func newLstater(root string) *lstater { return &lstater{root: root, dirs: map[string]bool{}} }

// lstater returns a new lstater of the work tree that counts its work.
func (r *Repo) lstater() *lstater {
	l := newLstater(r.root)
	l.n = &r.counts
	return l
}

func (l *lstater) abs(rel string) string { return filepath.Join(l.root, filepath.FromSlash(rel)) }

func (l *lstater) lstat(rel string) (fs.FileInfo, error) {
	if r, ok := l.preloaded(rel); ok {
		return r.fi, r.err
	}
	if d := path.Dir(rel); d != "." && !l.isDir(d) {
		return nil, fs.ErrNotExist
	}
	l.n.stat()
	return os.Lstat(l.abs(rel))
}

func (l *lstater) isDir(d string) bool {
	if v, ok := l.dirs[d]; ok {
		return v
	}
	ok := true
	if p := path.Dir(d); p != "." {
		ok = l.isDir(p)
	}
	if ok {
		l.n.stat()
		fi, err := os.Lstat(l.abs(d))
		ok = err == nil && fi.IsDir()
	}
	l.dirs[d] = ok
	return ok
}

// isFileInfo reports whether fi is something git stores as a blob: a
// regular file or a symbolic link.
func isFileInfo(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0
}

// worktreeMode is the git mode of a work tree file. Without core.fileMode
// the executable bit is not trusted and known stays as it is.
func worktreeMode(fi fs.FileInfo, fileMode bool, known filemode.FileMode) filemode.FileMode {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return filemode.Symlink
	case !fileMode && (known == filemode.Regular || known == filemode.Executable):
		return known
	case fi.Mode()&0o100 != 0:
		return filemode.Executable
	default:
		return filemode.Regular
	}
}

// readContent returns what git stores for a file: its bytes, or a
// symbolic link's target.
func readContent(abs string, fi fs.FileInfo) ([]byte, error) {
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(abs)
		return []byte(t), err
	}
	return os.ReadFile(abs)
}

// version is a work tree file as git sees it.
type version struct {
	hash plumbing.Hash
	mode filemode.FileMode
	info fs.FileInfo
	data []byte // the content when it had to be read; nil when the index vouched for it
}

// scanner compares work tree files with index entries, trusting an entry's
// stat data (size, mtime) when it is not racy, as git does.
type scanner struct {
	lst      *lstater
	fileMode bool
	idxTime  time.Time // the index file's mtime; zero when there is none
}

// current returns the work tree version of rel; ok is false when rel is
// missing or is not a file (a directory now stands there). ie is rel's
// index entry, or nil.
func (s *scanner) current(rel string, ie *index.Entry) (v version, ok bool, err error) {
	if ie != nil && (ie.Mode == filemode.Submodule || ie.SkipWorktree) {
		return version{hash: ie.Hash, mode: ie.Mode}, true, nil
	}
	fi, err := s.lst.lstat(rel)
	if err != nil {
		if isNotExist(err) {
			return version{}, false, nil
		}
		return version{}, false, err
	}
	if !isFileInfo(fi) {
		return version{}, false, nil
	}
	var known filemode.FileMode
	if ie != nil {
		known = ie.Mode
	}
	mode := worktreeMode(fi, s.fileMode, known)
	if ie != nil && ie.Mode == mode && s.statClean(ie, fi) {
		return version{hash: ie.Hash, mode: mode, info: fi}, true, nil
	}
	s.lst.n.read()
	data, err := readContent(s.lst.abs(rel), fi)
	if err != nil {
		if isNotExist(err) {
			return version{}, false, nil
		}
		return version{}, false, err
	}
	return version{hash: plumbing.ComputeHash(plumbing.BlobObject, data), mode: mode, info: fi, data: data}, true, nil
}

// preload stats, ahead of current, the paths whose index entry says they
// are in the work tree (see lstater.preload); keep says which to.
func (s *scanner) preload(paths []string, idx map[string]*index.Entry, keep func(string) bool) {
	if len(paths) < preloadMin {
		return
	}
	var todo []string
	for _, p := range paths {
		if ie, ok := idx[p]; ok && ie.Mode != filemode.Submodule && !ie.SkipWorktree && keep(p) {
			todo = append(todo, p)
		}
	}
	s.lst.preload(todo)
}

// statClean reports whether the index entry's stat data shows the file
// unchanged since the entry was written. A file modified in the same
// instant as the index was written is racy and must be read.
//
// Like git, it also compares the change time and the inode when the entry
// has them: a file rewritten with its old size and modification time put
// back (cp -p, touch -r, an archive extracted) has a new change time, and
// one replaced by a rename a new inode.
func (s *scanner) statClean(ie *index.Entry, fi fs.FileInfo) bool {
	if ie.ModifiedAt.IsZero() || !ie.ModifiedAt.Equal(fi.ModTime()) ||
		ie.Size != uint32(fi.Size()) || !fi.ModTime().Before(s.idxTime) {
		return false
	}
	var cur index.Entry
	fillSys(&cur, fi)
	if !ie.CreatedAt.IsZero() && !cur.CreatedAt.IsZero() && !ie.CreatedAt.Equal(cur.CreatedAt) {
		return false
	}
	return ie.Inode == 0 || cur.Inode == 0 || ie.Inode == cur.Inode
}

// pathSet is a set of slash paths; a path is in it when it or one of its
// parent directories was added.
type pathSet map[string]struct{}

func newPathSet(paths []string) pathSet {
	s := pathSet{}
	for _, p := range paths {
		if p = cleanRel(p); p != "" {
			s[p] = struct{}{}
		}
	}
	return s
}

func (s pathSet) has(p string) bool {
	if len(s) == 0 {
		return false
	}
	for p != "." && p != "" && p != "/" {
		if _, ok := s[p]; ok {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i] // path.Dir without its Clean, which allocates
	}
	return false
}

// cleanRel normalises a work tree relative path: slashes, no "./", no
// trailing slash. It returns "" for the root and for paths that leave it.
func cleanRel(p string) string {
	p = path.Clean(filepath.ToSlash(p))
	if p == "." || p == "/" || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return ""
	}
	return p
}

// isTempName reports whether rel names a temporary file of
// atomicfile.CreateTemp ("." + name + atomicfile.TempMarker + random), which
// this package writes with. A process killed between creating one and
// renaming it leaves it behind; Status, Untracked and Commit never report
// or stage such leftovers, and ResetTo removes them.
func isTempName(rel string) bool {
	return atomicfile.IsTemp(path.Base(rel))
}
