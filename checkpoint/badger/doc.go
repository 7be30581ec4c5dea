// Package badger is the checkpoint.Store kept on disk, in a Badger v4
// database in one directory: Open opens it, and Store implements the
// contract described in package checkpoint (each Put one Badger
// transaction, ordering and fencing checked inside it, large values stored
// once per run as content-addressed blobs, fencing tokens reserved on disk a
// block at a time) and passes checkpoint/checkpointtest. It is a package of
// its own so that the graph runtime, which imports checkpoint, does not link
// Badger; its errors are checkpoint's, so callers match them with errors.Is
// and errors.As against package checkpoint.
//
// # Damaged stores
//
// Open checks the database files before Badger opens them (the MANIFEST,
// and each table's index footer and checksums, read with bounds checks so
// that a truncated file gives an error, not Badger's panic and debug dump)
// and reports damage as an error matching checkpoint.ErrCorrupt whose
// message is one line naming the store, what is damaged and what to do; a
// directory holding anything but a gaffer store as
// checkpoint.ErrForeignStore, and a store open in another process as
// checkpoint.ErrLocked. A corrupt record read from an open store is
// reported the same way (the error still unwraps to the
// *checkpoint.CorruptError).
//
// Badger reads its memtable logs and newest value log up to the first entry
// that fails its checksum and cuts the file there: a damaged entry would
// silently drop every checkpoint after it. Open reads those logs first and
// refuses a store where a damaged entry has records after it (see
// checkLogs); the entry a killed process was writing is not damage, even
// when Go's copy of it had written its body but not yet its head. A store
// without memtable logs is checked read-only before Badger opens it for
// writing. An open that fails changes no file of the store.
//
// # Disk space
//
// Badger writes its memtable log and new tables through memory maps, where a
// full disk is a SIGBUS instead of an error. The store therefore opens,
// writes and closes only while its file system has twice the memtable size
// and 4 MiB free; otherwise it returns a *checkpoint.NoSpaceError (matching
// syscall.ENOSPC) and, on Close, leaves the database as a killed process
// leaves it, every acknowledged write in its logs. Badger's own ENOSPC at
// open is that error too, never damage.
//
// The store prints nothing to stdout or stderr: Badger's log lines go to
// Options.Logger or nowhere.
package badger
