package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// readIndex reads the index and its file's modification time (zero when
// there is no index yet). An index whose size and trailing checksum are
// those of the one read last is not decoded again: the entries come from
// r.snaps, and must not be changed.
func (r *Repo) readIndex() (*index.Index, time.Time, error) {
	p := filepath.Join(r.gitDir, "index")
	f, err := os.Open(p)
	if err != nil {
		if isNotExist(err) {
			return &index.Index{Version: 2}, time.Time{}, nil
		}
		return nil, time.Time{}, &Error{Op: "read index", Path: p, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, &Error{Op: "read index", Path: p, Err: err}
	}
	var sum [20]byte
	if fi.Size() >= int64(len(sum)) {
		if _, err := f.ReadAt(sum[:], fi.Size()-int64(len(sum))); err != nil {
			return nil, time.Time{}, &Error{Op: "read index", Path: p, Err: err}
		}
	}
	c := &r.snaps
	if c.idx != nil && sum != ([20]byte{}) && sum == c.idxSum && fi.Size() == c.idxSize {
		return c.idx, fi.ModTime(), nil
	}
	idx := &index.Index{}
	if err := index.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, time.Time{}, &Error{Op: "read index", Path: p, Err: err}
	}
	c.idx, c.idxSum, c.idxSize, c.byPath, c.union = idx, sum, fi.Size(), nil, nil
	return idx, fi.ModTime(), nil
}

// indexEntries is readIndex's entries by path (indexByPath), cached with
// the index: the map is shared and must not be changed.
// cached says the map is r.snaps.byPath.
func (r *Repo) indexEntries() (m map[string]*index.Entry, t time.Time, cached bool, err error) {
	idx, t, err := r.readIndex()
	if err != nil {
		return nil, t, false, err
	}
	c := &r.snaps
	if c.idx != idx {
		return indexByPath(idx), t, false, nil // no index file
	}
	if c.byPath == nil {
		c.byPath = indexByPath(idx)
	}
	return c.byPath, t, true, nil
}

// indexByPath maps each indexed path to its entry. A path with conflict
// stages maps to its "ours" (or any) stage with the stat data cleared, so
// that it is always compared by content.
func indexByPath(idx *index.Index) map[string]*index.Entry {
	m := make(map[string]*index.Entry, len(idx.Entries))
	rank := map[string]int{}
	for _, e := range idx.Entries {
		if e.Stage == stageMerged {
			m[e.Name] = e
			rank[e.Name] = 0
			continue
		}
		r := stageRank(e.Stage)
		if cur, ok := rank[e.Name]; ok && cur <= r {
			continue
		}
		c := *e
		c.Stage = stageMerged
		c.ModifiedAt = time.Time{}
		m[e.Name] = &c
		rank[e.Name] = r
	}
	return m
}

// stageRank orders conflict stages by preference: ours, theirs, base.
func stageRank(s index.Stage) int {
	switch s {
	case index.OurMode:
		return 1
	case index.TheirMode:
		return 2
	}
	return 3
}

// stageMerged is the stage of an entry without conflict. (go-git's
// index.Merged is 1, which is the conflict's common ancestor.)
const stageMerged index.Stage = 0

// newEntry builds an index entry for a file whose content has hash h,
// taking its stat data from fi when fi is not nil.
func newEntry(name string, h plumbing.Hash, mode filemode.FileMode, fi fs.FileInfo) *index.Entry {
	e := &index.Entry{Name: name, Hash: h, Mode: mode}
	if fi != nil {
		e.ModifiedAt = fi.ModTime()
		e.Size = uint32(fi.Size())
		fillSys(e, fi)
	}
	return e
}

// writeIndex replaces the index with entries, under index.lock.
// Extensions of the old index (the cached tree, resolve-undo) are dropped;
// git rebuilds them as needed.
func (r *Repo) writeIndex(entries []*index.Entry) error {
	idx := &index.Index{Version: 2, Entries: entries}
	for _, e := range entries {
		if e.SkipWorktree || e.IntentToAdd {
			idx.Version = 3
		}
	}
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return &Error{Op: "write index", Path: r.gitDir, Err: err}
	}
	p := filepath.Join(r.gitDir, "index")
	l, err := lock(p)
	if err != nil {
		return err
	}
	data := buf.Bytes()
	r.snaps.idx = nil // until the new one is in place
	if err := l.commit(data); err != nil {
		return err
	}
	c := &r.snaps
	copy(c.idxSum[:], data[len(data)-len(c.idxSum):])
	c.idx, c.idxSize, c.byPath, c.union = idx, int64(len(data)), nil, nil
	return nil
}

// lockFile is git's lock protocol: PATH.lock is created exclusively,
// written, synced and renamed over PATH. Git commands use the same
// protocol, so they and this package never write the same file at once.
type lockFile struct {
	f    *os.File
	path string
}

func lock(path string) (*lockFile, error) {
	lp := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, &Error{Op: "lock", Path: lp, Err: err}
	}
	f, err := os.OpenFile(lp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s (another git process is running, or one crashed: remove the file if none is running)", ErrLocked, lp)
		}
		return nil, &Error{Op: "lock", Path: lp, Err: err}
	}
	return &lockFile{f: f, path: path}, nil
}

func (l *lockFile) commit(data []byte) error {
	lp := l.f.Name()
	if _, err := l.f.Write(data); err != nil {
		l.abort()
		return &Error{Op: "write", Path: lp, Err: err}
	}
	if err := l.f.Sync(); err != nil {
		l.abort()
		return &Error{Op: "sync", Path: lp, Err: err}
	}
	if err := l.f.Close(); err != nil {
		_ = os.Remove(lp)
		return &Error{Op: "write", Path: lp, Err: err}
	}
	if err := os.Rename(lp, l.path); err != nil {
		_ = os.Remove(lp)
		return &Error{Op: "rename", Path: lp, Err: err}
	}
	return syncDir(filepath.Dir(l.path))
}

func (l *lockFile) abort() {
	_ = l.f.Close()
	_ = os.Remove(l.f.Name())
}

// refFile is the loose file of a reference: HEAD and per-worktree refs in
// the worktree's git directory, everything else in the common one.
func (r *Repo) refFile(name plumbing.ReferenceName) string {
	s := name.String()
	if s == "HEAD" || strings.HasPrefix(s, "refs/worktree/") || strings.HasPrefix(s, "refs/bisect/") {
		return filepath.Join(r.gitDir, filepath.FromSlash(s))
	}
	return filepath.Join(r.commonDir, filepath.FromSlash(s))
}

// setHead moves HEAD's branch (or HEAD itself when detached) from old to
// h, failing with ErrConcurrentUpdate if it no longer points to old (the
// zero hash: the branch must not exist yet). A reflog entry with msg is
// appended for the branch and for HEAD.
func (r *Repo) setHead(old, h plumbing.Hash, sig Signature, msg string) error {
	name := plumbing.HEAD
	head, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return &Error{Op: "read", Path: "HEAD", Err: err}
	}
	if head.Type() == plumbing.SymbolicReference {
		name = head.Target()
	}
	file := r.refFile(name)
	l, err := lock(file)
	if err != nil {
		return err
	}
	cur := plumbing.ZeroHash
	ref, err := r.repo.Storer.Reference(name)
	switch {
	case err == nil:
		cur = ref.Hash()
	case !errors.Is(err, plumbing.ErrReferenceNotFound):
		l.abort()
		return &Error{Op: "read", Path: name.String(), Err: err}
	}
	if cur != old {
		l.abort()
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrConcurrentUpdate, name.Short(), short(cur), short(old))
	}
	if err := l.commit([]byte(h.String() + "\n")); err != nil {
		return err
	}
	line := reflogLine(old, h, sig, r.now(), msg)
	r.appendReflog(filepath.Join(r.gitDir, "logs", "HEAD"), line)
	if name != plumbing.HEAD {
		r.appendReflog(filepath.Join(r.commonDir, "logs", filepath.FromSlash(name.String())), line)
	}
	return nil
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing (unborn)"
	}
	return h.String()[:12]
}

func reflogLine(old, h plumbing.Hash, sig Signature, when time.Time, msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	return fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, h, sig.Name, sig.Email, when.Unix(), when.Format("-0700"), msg)
}

// appendReflog records a ref update so that `git reflog` can recover what
// a reset discarded. It is best effort: the update itself has happened.
func (r *Repo) appendReflog(file, line string) {
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		return
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	_ = f.Close()
}
