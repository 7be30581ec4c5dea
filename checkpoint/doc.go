// Package checkpoint persists the runs of a gaffer graph: one checkpoint per
// step, the pending writes of finished tasks, and a lease that keeps one
// writer per run. Store is the contract; NewMemory and OpenBadger implement
// it, and checkpoint/checkpointtest is the suite every implementation passes.
//
// # What is persisted when
//
// Put writes one checkpoint atomically: the record, any new blobs and the
// run's index entry commit together in one transaction, or not at all. With
// PutOptions.Sync the write is on stable storage (fsync) before Put returns;
// without it a crash of the machine (not of the process) may lose the most
// recent unsynced checkpoints, never tear one. Sync writes of concurrent
// goroutines share flushes (group commit): one flush covers every write
// whose transaction committed before the flush started, so many runs
// writing at once pay for far fewer flushes than writes, while a lone
// writer still flushes at once. PutWrites saves the results
// of finished tasks against the checkpoint they build on, each keyed by
// (TaskID, Index): the first write of a key wins and repeats are ignored, so
// a task re-run after a crash cannot change a result already saved. Writes
// returns them ordered by (TaskID, Index).
//
// # Ordering
//
// The store, not the caller's memory, decides order. Seq numbers start at 1
// and grow by one within a run; Put fails with ErrConflict when its Seq is
// taken or its Parent is not the run's latest Seq, so of two writers racing
// for the same step exactly one wins. Prune keeps the newest checkpoints and
// removes older ones with their writes; it never changes what the next Seq
// must be. Delete removes everything of a run.
//
// # Leases and fencing
//
// Acquire gives one owner a time-limited lease on a run and a fencing token
// that is greater than any token handed out before by this store. The holder
// passes the token as PutOptions.Fence; a write whose token is not the run's
// current lease token fails with ErrFenced, checked in the same transaction
// as the write. A lease held by another owner is refused with a
// *LeaseHeldError until it expires, except that a holder on the same host
// (Owner.Host) whose process no longer exists is replaced at once, so
// resuming right after a crash never waits. An expired lease keeps fencing
// until someone else takes it. Leases of different runs are independent:
// any number of runs may acquire theirs at once without contending (the
// Badger store reserves tokens on disk a block at a time, as a database
// sequence does, rather than rewriting one counter per Acquire).
//
// # Blobs
//
// Values longer than a small threshold (64 bytes by default) are stored once
// per run under their SHA-256 and referenced from each checkpoint, so a large
// value that does not change between steps costs a reference of about 40
// bytes per step, not its size. Blobs belong to their run: Delete and Prune of one run
// never touch another's, and Prune removes only blobs no remaining checkpoint
// refers to.
//
// # Strictness
//
// Every record carries SchemaVersion and a CRC-32C. A record that is
// truncated, fails its checksum, has an unknown version or a blob whose hash
// does not match is reported as a *CorruptError naming the run and Seq (and
// wrapping ErrCorrupt), never decoded into zero values. OpenBadger checks the
// database files before Badger opens them (the MANIFEST, and each table's
// index footer and checksums, read with bounds checks so that a truncated
// file gives an error, not Badger's panic and debug dump) and reports damage
// as an error matching ErrCorrupt whose message is one line naming the store,
// what is damaged and what to do; a directory holding anything but a gaffer
// store as ErrForeignStore, and a store open in another process as ErrLocked.
// A corrupt record read from an open store is reported the same way (the
// error still unwraps to the *CorruptError).
//
// Badger reads its memtable logs and newest value log up to the first entry
// that fails its checksum and cuts the file there: a damaged entry would
// silently drop every checkpoint after it. OpenBadger reads those logs first
// and refuses a store where a damaged entry has records after it (see
// checkLogs); the entry a killed process was writing is not damage. A store
// without memtable logs is checked read-only before Badger opens it for
// writing. An open that fails changes no file of the store.
//
// # Disk space
//
// Badger writes its memtable log and new tables through memory maps, where a
// full disk is a SIGBUS instead of an error. The store therefore opens,
// writes and closes only while its file system has twice the memtable size
// and 4 MiB free; otherwise it returns a *NoSpaceError (matching
// syscall.ENOSPC) and, on Close, leaves the database as a killed process
// leaves it, every acknowledged write in its logs. Badger's own ENOSPC at
// open is that error too, never damage.
//
// The store prints nothing to stdout or stderr: Badger's log lines go to
// BadgerOptions.Logger or nowhere.
package checkpoint
