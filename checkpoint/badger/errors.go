package badger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Causes inside a *CorruptError.
var (
	errTruncated = errors.New("record is truncated")
	errChecksum  = errors.New("checksum mismatch")
	errTrailing  = errors.New("trailing bytes after record")
	errBadKey    = errors.New("malformed key")
)

// ErrReadOnly is the error of a write to a store opened for reading
// (Options.Reading) that Badger opened read-only.
var ErrReadOnly = errors.New("opened for reading only")

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

func (e *lockedError) Is(target error) bool { return target == checkpoint.ErrLocked }
func (e *lockedError) Unwrap() error        { return e.cause }

// damage says what is wrong with a store's files, in words that follow "is
// damaged (": no package prefix, one line. It matches ErrCorrupt.
type damage struct{ msg string }

func damagef(format string, args ...any) error {
	return &damage{msg: oneLine(fmt.Sprintf(format, args...))}
}

func (d *damage) Error() string        { return d.msg }
func (d *damage) Is(target error) bool { return target == checkpoint.ErrCorrupt }

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

func (e *damagedError) Is(target error) bool { return target == checkpoint.ErrCorrupt }
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
