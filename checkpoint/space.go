package checkpoint

import (
	"fmt"
	"syscall"
)

// spareTables is the room, beyond two memtables, that the store keeps free
// for the tables Badger writes when it flushes and compacts.
const spareTables = 4 << 20

// minFree is the free space the store's file system must have for the
// store to open and for every write: a memtable log is a memory-mapped
// file of twice the memtable size that Badger fills page by page, and
// flushing a memtable writes a table through a memory map too. A write
// into such a map on a full disk is not an error but a SIGBUS, which kills
// the process with a goroutine dump; so the store refuses the write while
// it still can, with a NoSpaceError (it matches syscall.ENOSPC).
func (o BadgerOptions) minFree() int64 { return 2*o.MemTableSize + spareTables }

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

// checkSpace returns a *NoSpaceError when dir's file system has less than
// need bytes free, and nil when it has enough or cannot tell.
func checkSpace(dir string, need int64) error {
	free, ok := freeSpace(dir)
	if !ok || free >= need {
		return nil
	}
	return &NoSpaceError{Dir: dir, Free: free, Need: need}
}
