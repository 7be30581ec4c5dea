// Package checkpoint persists the runs of a gaffer graph: one checkpoint per
// step, the pending writes of finished tasks, and a lease that keeps one
// writer per run. Store is the contract; NewMemory implements it in memory,
// checkpoint/badger implements it on disk (badger.Open),
// checkpoint/postgres in a PostgreSQL database shared by many hosts
// (postgres.Open), and
// checkpoint/checkpointtest is the suite every implementation passes. This
// package links no database: the graph runtime imports it, and only the
// program that opens a store on disk links Badger.
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
// for the same step exactly one wins. A commit whose answer was lost (a
// dropped connection) is safe to send again: a fenced Put that finds its
// own identical record as the run's latest succeeds without writing, and a
// different record there is still ErrConflict (IsRetry). Prune keeps the newest checkpoints and
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
// wrapping ErrCorrupt), never decoded into zero values. A store on disk
// reports a store directory whose files are damaged as an error matching
// ErrCorrupt, a directory holding anything but a gaffer store as
// ErrForeignStore, a store open in another process as ErrLocked, and a file
// system too full to write safely as a *NoSpaceError (matching
// syscall.ENOSPC); see checkpoint/badger.
package checkpoint
