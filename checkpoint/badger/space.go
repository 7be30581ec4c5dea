package badger

import "github.com/gaffer-dev/gaffer/checkpoint"

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
func (o Options) minFree() int64 { return 2*o.MemTableSize + spareTables }

// checkSpace returns a *NoSpaceError when dir's file system has less than
// need bytes free, and nil when it has enough or cannot tell.
func checkSpace(dir string, need int64) error {
	free, ok := freeSpace(dir)
	if !ok || free >= need {
		return nil
	}
	return &checkpoint.NoSpaceError{Dir: dir, Free: free, Need: need}
}
