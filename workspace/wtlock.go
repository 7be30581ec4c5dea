package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WorkTreeLockFile is the name, in the git directory, of the file a
// process locks while it executes phases on the work tree.
const WorkTreeLockFile = "gaffer-worktree.lock"

// Holder says who holds the work tree: a process and the run it executes.
type Holder struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
	Run  string `json:"run,omitempty"`
}

// String returns "pid P on host H (run R)".
func (h Holder) String() string {
	if h.PID == 0 {
		return "another process"
	}
	s := fmt.Sprintf("pid %d on host %s", h.PID, h.Host)
	if h.Run != "" {
		s += " (run " + h.Run + ")"
	}
	return s
}

// WorkTreeHeldError is returned by LockWorkTree when another process holds
// the work tree's lock. It matches ErrWorkTreeHeld.
type WorkTreeHeldError struct {
	Root   string // the work tree
	Holder Holder // who holds it, as it wrote in the lock file; zero when unreadable
}

// Error names the work tree and the holder.
func (e *WorkTreeHeldError) Error() string {
	return fmt.Sprintf("work tree %s is in use by %s", e.Root, e.Holder)
}

// Is matches ErrWorkTreeHeld.
func (e *WorkTreeHeldError) Is(target error) bool { return target == ErrWorkTreeHeld }

// ErrWorkTreeHeld is matched by every *WorkTreeHeldError.
var ErrWorkTreeHeld = errors.New("workspace: work tree held by another process")

// WorkTreeLock is a held work-tree lock; Unlock releases it.
type WorkTreeLock struct {
	f      *os.File
	holder Holder
}

// Holder is who holds the lock: this process and the run it was taken
// for.
func (l *WorkTreeLock) Holder() Holder { return l.holder }

// LockWorkTree takes the work tree's lock for run: an exclusive flock on
// WorkTreeLockFile in the git directory, independent of any store, so two
// processes never execute phases on one work tree, whatever stores they
// use. The lock belongs to the open file, so it dies with the process (a
// SIGKILL leaves nothing to clean); the file keeps the holder's pid, host
// and run for the error a second process gets, a *WorkTreeHeldError.
// A process that holds the lock and asks again gets ErrWorkTreeHeld too:
// callers take it once per execution.
func (r *Repo) LockWorkTree(run string) (*WorkTreeLock, error) {
	path := filepath.Join(r.gitDir, WorkTreeLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &Error{Op: "lock", Path: path, Err: err}
	}
	ok, err := tryLock(f)
	if err != nil {
		_ = f.Close()
		return nil, &Error{Op: "lock", Path: path, Err: err}
	}
	if !ok {
		defer f.Close()
		var h Holder
		if b, err := os.ReadFile(path); err == nil {
			_ = json.Unmarshal([]byte(strings.TrimSpace(string(b))), &h)
		}
		return nil, &WorkTreeHeldError{Root: r.root, Holder: h}
	}
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, Run: run}
	b, _ := json.Marshal(h)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	return &WorkTreeLock{f: f, holder: h}, nil
}

// Unlock releases the lock. It is safe to call on a nil lock and more
// than once.
func (l *WorkTreeLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = unlock(l.f)
	_ = l.f.Close()
	l.f = nil
}
