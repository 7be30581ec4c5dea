package checkpoint

import (
	"errors"
	"fmt"
	"syscall"
)

var (
	// ErrNotFound is returned when a run or checkpoint does not exist.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrConflict is returned when a write races another writer of the same run.
	ErrConflict = errors.New("checkpoint: conflicting write")
	// ErrFenced is returned when a write carries a stale lease token.
	ErrFenced = errors.New("checkpoint: lease lost (stale fencing token)")
	// ErrCorrupt is wrapped by every *CorruptError, and matched by the error
	// a store on disk (badger.Open) returns when its files are damaged.
	ErrCorrupt = errors.New("checkpoint: corrupt record")
	// ErrForeignStore is returned when a directory holds something that is not a gaffer store.
	ErrForeignStore = errors.New("checkpoint: not a gaffer store")
)

// LeaseHeldError reports that another owner holds a run's lease.
type LeaseHeldError struct {
	RunID  string
	Holder Owner
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("run %s is held by pid %d on host %s", e.RunID, e.Holder.PID, e.Holder.Host)
}

// CorruptError reports a record that cannot be decoded. It names the run and
// sequence number so the user knows what is damaged.
type CorruptError struct {
	RunID string
	Seq   uint64
	What  string // "checkpoint", "write", "blob", "lease", ...
	Err   error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("checkpoint: corrupt %s record for run %s seq %d: %v", e.What, e.RunID, e.Seq, e.Err)
}

func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

var (
	// ErrInvalid is returned for arguments no store could accept, such as a
	// Seq that is not Parent+1 or a Prune that would keep nothing.
	ErrInvalid = errors.New("checkpoint: invalid argument")
	// ErrLocked is returned by badger.Open when another process (or another
	// open store in this process) holds the store directory.
	ErrLocked = errors.New("checkpoint: store is in use by another process")
	// ErrUnavailable is returned by a store that cannot be reached (a
	// database that is down or restarting) after it waited for it as long
	// as it was told to: the machine's fault, not the run's. Nothing the
	// store acknowledged is lost; the run continues once it is back.
	ErrUnavailable = errors.New("checkpoint: the store cannot be reached")
	// ErrDeleted is returned by Close of a store whose directory was
	// deleted while it was open: what it held is gone, and Close does not
	// wait for writes that can no longer land.
	ErrDeleted = errors.New("checkpoint: store was deleted while open")
	// ErrClosed is returned by every method of a closed store.
	ErrClosed = errors.New("checkpoint: store is closed")
)

// NoSpaceError reports that the file system holding a store has too
// little free space for the store to work safely. It matches
// syscall.ENOSPC. Nothing is damaged: once there is room, the store opens
// and writes again.
type NoSpaceError struct {
	Dir  string // the store
	Free int64  // bytes free on its file system
	Need int64  // bytes the store needs free
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("no space left on device for store %s (%s free, it needs %s)", e.Dir, mib(e.Free), mib(e.Need))
}

// Unwrap returns syscall.ENOSPC.
func (e *NoSpaceError) Unwrap() error { return syscall.ENOSPC }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
