package checkpoint

import (
	"context"
	"time"
)

// SchemaVersion is the version of the checkpoint record layout written by
// this package. Records with any other version are rejected on read.
const SchemaVersion = 1

// Checkpoint is one saved step of a run. Seq numbers start at 1 and grow by
// one per checkpoint within a run; the store, not the caller's memory, is the
// authority on ordering: Put fails with ErrConflict when Seq is taken.
type Checkpoint struct {
	RunID  string
	Seq    uint64 // 1, 2, 3, ... within RunID
	Parent uint64 // Seq of the checkpoint this one follows; 0 for the first
	Step   int    // graph step number (may differ from Seq after UpdateState)

	Ran  []string // nodes that ran in the step that produced this checkpoint
	Next []string // nodes due next; empty when the run is finished

	// Values is the encoded state, one entry per top-level field (channel).
	// Stores keep large values content-addressed, so a value that does not
	// change between checkpoints is stored once.
	Values map[string][]byte

	// Interrupt is the pending interrupt, if the run stopped on one.
	Interrupt *Interrupt

	Status string            // free-form run status set by the runtime ("running", "interrupted", "done", ...)
	Meta   map[string]string // small metadata: source ("loop", "update", "fork"), fork origin, ...
	Time   time.Time         // wall-clock time the checkpoint was made (set by the caller)

	// Summary is a small digest of the state made by the caller (what a
	// listing of runs shows), nil for none. Stores keep the latest
	// checkpoint's with the run's index, written in the same transaction
	// as the checkpoint, so that Runs returns it without reading any
	// state; Get, Latest and List need not return it.
	Summary []byte
}

// Interrupt records a node that stopped the run waiting for outside input.
type Interrupt struct {
	Node    string   // node that raised it (or the node due, for InterruptBefore)
	TaskID  string   // deterministic task id of the interrupted task
	Kind    string   // "dynamic", "before" or "after"
	Index   int      // which Interrupt call in the node (0-based) is waiting
	Payload []byte   // JSON payload given to Interrupt
	Answers [][]byte // JSON resume values already given, matched by order
}

// Write is a pending write: the result of one finished task (for example one
// fan-out branch) saved before the checkpoint that consumes it. Writes are
// keyed by (RunID, Seq, TaskID, Index) and are idempotent per (TaskID, Index).
type Write struct {
	TaskID string
	Index  int
	Node   string
	Value  []byte
}

// ListOptions filters List. Zero values mean "no limit" and "from the newest".
type ListOptions struct {
	Limit  int
	Before uint64 // only checkpoints with Seq < Before (0 = no bound)
}

// PutOptions tunes a single write.
type PutOptions struct {
	// Sync makes the write durable (fsync) before Put returns.
	Sync bool
	// Fence is the lease token of the writer. When non-zero, the write fails
	// with ErrFenced unless the run's current lease carries this token.
	Fence uint64
}

// RunInfo summarises one run for listing.
type RunInfo struct {
	RunID  string
	Latest uint64 // Seq of the newest checkpoint
	Status string
	Time   time.Time // time of the newest checkpoint
	// Summary is the newest checkpoint's Summary (nil when it had none).
	// Runs answers with bytes of the caller's own, which the store never
	// writes again (a listing cuts its strings from them).
	Summary []byte
}

// Owner identifies the holder of a lease.
type Owner struct {
	ID   string // unique per process (or per runner), e.g. host/pid/random
	PID  int
	Host string
}

// Lease is a time-limited claim on a run by one owner. Token is a fencing
// token that increases every time the lease changes hands.
type Lease struct {
	RunID   string
	Owner   Owner
	Token   uint64
	Expires time.Time
}

// Store persists checkpoints, pending writes and leases. Implementations must
// be safe for concurrent use and must pass checkpoint/checkpointtest.
type Store interface {
	// Put writes one checkpoint atomically. It fails with ErrConflict when a
	// checkpoint with the same (RunID, Seq) exists or when Parent is not the
	// run's latest Seq, and with ErrFenced when opts.Fence is stale.
	Put(ctx context.Context, cp Checkpoint, opts PutOptions) error
	// PutWrites saves pending writes made on top of checkpoint seq. A write
	// whose (TaskID, Index) is already stored is left as it is.
	PutWrites(ctx context.Context, runID string, seq uint64, writes []Write, opts PutOptions) error
	// Writes returns the pending writes made on top of checkpoint seq,
	// ordered by (TaskID, Index).
	Writes(ctx context.Context, runID string, seq uint64) ([]Write, error)

	// Latest returns the newest checkpoint of a run, or ErrNotFound.
	Latest(ctx context.Context, runID string) (Checkpoint, error)
	// Get returns one checkpoint, or ErrNotFound.
	Get(ctx context.Context, runID string, seq uint64) (Checkpoint, error)
	// List returns a run's checkpoints newest first.
	List(ctx context.Context, runID string, opts ListOptions) ([]Checkpoint, error)
	// Runs lists all runs, newest activity first.
	Runs(ctx context.Context) ([]RunInfo, error)

	// Delete removes a run with all its checkpoints, writes, blobs and lease.
	Delete(ctx context.Context, runID string) error
	// Prune keeps the newest keep checkpoints of a run and removes the rest
	// (and the writes and blobs only they used).
	Prune(ctx context.Context, runID string, keep int) error

	// Acquire takes the run's lease for owner for ttl. It fails with an
	// *LeaseHeldError when another live owner holds it. Acquiring a lease the
	// owner already holds renews it.
	Acquire(ctx context.Context, runID string, owner Owner, ttl time.Duration) (Lease, error)
	// Renew extends a held lease; ErrFenced if it was lost.
	Renew(ctx context.Context, lease Lease, ttl time.Duration) (Lease, error)
	// Release gives the lease up. Releasing a lease no longer held is a no-op.
	Release(ctx context.Context, lease Lease) error

	// Close releases the store's resources.
	Close() error
}
