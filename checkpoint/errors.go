package checkpoint

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNotFound is returned when a run or checkpoint does not exist.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrConflict is returned when a write races another writer of the same run.
	ErrConflict = errors.New("checkpoint: conflicting write")
	// ErrFenced is returned when a write carries a stale lease token.
	ErrFenced = errors.New("checkpoint: lease lost (stale fencing token)")
	// ErrCorrupt is wrapped by every *CorruptError, and matched by the error
	// OpenBadger returns for a store whose files are damaged.
	ErrCorrupt = errors.New("checkpoint: corrupt record")
	// ErrForeignStore is returned when a directory holds something that is not a gaffer store.
	ErrForeignStore = errors.New("checkpoint: not a gaffer store")
)

// Causes inside a *CorruptError.
var (
	errTruncated = errors.New("record is truncated")
	errChecksum  = errors.New("checksum mismatch")
	errTrailing  = errors.New("trailing bytes after record")
	errBadKey    = errors.New("malformed key")
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
	// ErrLocked is returned by OpenBadger when another process (or another
	// open store in this process) holds the store directory.
	ErrLocked = errors.New("checkpoint: store is in use by another process")
	// ErrClosed is returned by every method of a closed store.
	ErrClosed = errors.New("checkpoint: store is closed")
)

// lockedError says which store is locked; it matches ErrLocked.
type lockedError struct {
	dir   string
	cause error // Badger's own error, when Badger saw the lock
}

func (e *lockedError) Error() string {
	msg := fmt.Sprintf("checkpoint: store %s is in use by another process", e.dir)
	if e.cause != nil {
		msg += " (" + e.cause.Error() + ")"
	}
	return msg
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }
func (e *lockedError) Unwrap() error        { return e.cause }

// damage says what is wrong with a store's files, in words that follow "is
// damaged (": no package prefix, one line. It matches ErrCorrupt.
type damage struct{ msg string }

func damagef(format string, args ...any) error {
	return &damage{msg: oneLine(fmt.Sprintf(format, args...))}
}

func (d *damage) Error() string        { return d.msg }
func (d *damage) Is(target error) bool { return target == ErrCorrupt }

// damagedError reports a store directory whose files are damaged: one line
// naming the store, what is wrong and what to do. It matches ErrCorrupt and
// unwraps to the cause.
type damagedError struct {
	dir   string
	cause error
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("checkpoint: store %s is damaged (%s); restore it from a backup or move it aside to start afresh",
		e.dir, oneLine(strings.TrimPrefix(e.cause.Error(), "checkpoint: ")))
}

func (e *damagedError) Is(target error) bool { return target == ErrCorrupt }
func (e *damagedError) Unwrap() error        { return e.cause }

// oneLine reduces a message from Badger, which may be a multi-line debug
// dump (a panic while reading a table index), to its first line of text.
func oneLine(s string) string {
	if strings.Contains(s, "Recovering from initIndex crash") {
		return "its index is unreadable: the file is truncated or damaged"
	}
	for line := range strings.Lines(s) {
		if line = strings.Trim(strings.TrimSpace(line), "= "); line != "" {
			return line
		}
	}
	return "unreadable"
}
