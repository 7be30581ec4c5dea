package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Durability says when checkpoints reach the disk.
type Durability int

const (
	// Sync writes each checkpoint with fsync before the next step starts.
	Sync Durability = iota
	// Async writes each checkpoint before the next step starts, without fsync:
	// a crash of the machine (not of the process) may lose the last steps.
	Async
	// Exit keeps checkpoints in memory and writes them when the run stops
	// (done, interrupted, failed or cancelled). A killed process loses the run's
	// progress since it started or resumed.
	Exit
)

func (d Durability) String() string {
	switch d {
	case Sync:
		return "sync"
	case Async:
		return "async"
	case Exit:
		return "exit"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// DefaultStepLimit is the step limit of a Runner compiled without WithStepLimit.
const DefaultStepLimit = 10000

// DefaultLeaseTTL is the lease time-to-live of a Runner compiled without WithLeaseTTL.
const DefaultLeaseTTL = 30 * time.Second

// Option configures a Runner at Compile.
type Option func(*config)

// config is the Runner's configuration; validate fills in defaults and
// rejects nonsense.
type config struct {
	store         checkpoint.Store
	durability    Durability
	codec         any // Codec[S], checked at Compile
	merge         any // MergeFunc[S], checked at Compile
	mergeB        any // BranchMergeFunc[S], checked at Compile
	summary       any // SummaryFunc[S], checked at Compile
	stepLimit     int
	clock         func() time.Time
	sleep         func(context.Context, time.Duration) error
	owner         checkpoint.Owner
	leaseTTL      time.Duration
	before, after []string
	schema        int
}

func (c *config) validate() []string {
	var p []string
	if c.durability < Sync || c.durability > Exit {
		p = append(p, fmt.Sprintf("unknown durability %d", int(c.durability)))
	}
	if c.stepLimit < 0 {
		p = append(p, fmt.Sprintf("negative step limit %d", c.stepLimit))
	}
	if c.stepLimit == 0 {
		c.stepLimit = DefaultStepLimit
	}
	if c.leaseTTL < 0 {
		p = append(p, fmt.Sprintf("negative lease TTL %v", c.leaseTTL))
	}
	if c.leaseTTL == 0 {
		c.leaseTTL = DefaultLeaseTTL
	}
	if c.schema < 0 {
		p = append(p, fmt.Sprintf("negative schema version %d", c.schema))
	}
	if c.schema == 0 {
		c.schema = 1
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.owner.ID == "" {
		c.owner = defaultOwner()
	}
	return p
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func defaultOwner() checkpoint.Owner {
	host, _ := os.Hostname()
	var b [8]byte
	_, _ = rand.Read(b[:])
	pid := os.Getpid()
	return checkpoint.Owner{ID: fmt.Sprintf("%s/%d/%s", host, pid, hex.EncodeToString(b[:])), PID: pid, Host: host}
}

// WithStore persists the runner's runs in s. Nil (the default) means no
// persistence: Run works, but Resume and the history methods return ErrNoStore.
func WithStore(s checkpoint.Store) Option { return func(c *config) { c.store = s } }

// WithDurability sets when checkpoints are written (default Sync).
func WithDurability(d Durability) Option { return func(c *config) { c.durability = d } }

// WithCodec sets the state codec (default NewJSONCodec[S]()).
func WithCodec[S any](codec Codec[S]) Option { return func(c *config) { c.codec = codec } }

// MergeFunc combines the results of a fan-out step, given in branch order,
// with the state the branches started from.
type MergeFunc[S any] func(ctx context.Context, base S, branches []S) (S, error)

// WithMerge sets the function that combines fan-out branches. Without it
// (or WithMergeBranches, or reducers on the state's fields: see Reduce) a
// step that runs several nodes fails with ErrNoMerge, and Compile rejects
// static fan-outs. With it, the merge function combines the branches even
// when the state has reducers.
func WithMerge[S any](m func(ctx context.Context, base S, branches []S) (S, error)) Option {
	return func(c *config) { c.merge = MergeFunc[S](m) }
}

// Branch is one branch of a fan-out step, as a BranchMergeFunc sees it.
type Branch[S any] struct {
	Node   string // the node that ran
	Index  int    // the branch's index in the step
	Send   int    // the send's index among the step's sends, or -1 for a named node
	Input  S      // what the node ran on: the step's state, or the send's input
	Result S      // what the node returned (its update, for a Partial node)
}

// BranchMergeFunc combines the branches of a fan-out step, in branch order,
// with the state the step started from; unlike a MergeFunc it is told each
// branch's node, send index and input.
type BranchMergeFunc[S any] func(ctx context.Context, base S, branches []Branch[S]) (S, error)

// WithMergeBranches sets the function that combines fan-out branches, as
// WithMerge does, giving it each branch's node, send index and input, so
// that a graph that mixes named branches and sends can tell them apart. A
// runner has one merge function: this one or WithMerge's.
func WithMergeBranches[S any](m func(ctx context.Context, base S, branches []Branch[S]) (S, error)) Option {
	return func(c *config) { c.mergeB = BranchMergeFunc[S](m) }
}

// SummaryFunc makes a checkpoint's summary from what it holds: its state
// and the nodes due (and its run id, step and time).
type SummaryFunc[S any] func(Snapshot[S]) ([]byte, error)

// WithSummary makes every checkpoint carry summary's digest of it
// (checkpoint.Checkpoint.Summary). The store keeps the latest one's with
// the run's index, written with the checkpoint, and Store.Runs returns it:
// a listing of many runs then reads no state. A summary should be small (a
// few hundred bytes); an error from it fails the step, as the state's
// encoding would. It is made from the state, not from the interrupt: a
// checkpoint that only records an interrupt (or starts a fork) carries the
// summary of the state it holds.
func WithSummary[S any](summary func(Snapshot[S]) ([]byte, error)) Option {
	return func(c *config) { c.summary = SummaryFunc[S](summary) }
}

// WithStepLimit bounds the number of steps of a run, counted from its start
// across resumes (default DefaultStepLimit).
func WithStepLimit(n int) Option { return func(c *config) { c.stepLimit = n } }

// WithClock sets the clock that stamps checkpoints and events and times
// nodes (default time.Now). Fan-out branches call it concurrently.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithSleep sets the function that waits between retries (default: a timer
// that stops early when ctx is done). Tests pass one that records the waits.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) { c.sleep = sleep }
}

// WithOwner sets the lease owner (default: host, pid and a random id).
func WithOwner(o checkpoint.Owner) Option { return func(c *config) { c.owner = o } }

// WithLeaseTTL sets the lease time-to-live; the lease is renewed every third
// of it while a run is going (default DefaultLeaseTTL).
func WithLeaseTTL(d time.Duration) Option { return func(c *config) { c.leaseTTL = d } }

// WithInterruptBefore stops the run before any of nodes runs.
func WithInterruptBefore(nodes ...string) Option {
	return func(c *config) { c.before = append(c.before, nodes...) }
}

// WithInterruptAfter stops the run after any of nodes has run, the last
// node too: a run stopped after its last node is Interrupted with nothing
// due, and Resume finishes it without running anything, as LangGraph's
// interrupt_after does.
func WithInterruptAfter(nodes ...string) Option {
	return func(c *config) { c.after = append(c.after, nodes...) }
}

// WithSchemaVersion sets the state schema version written in every
// checkpoint's Meta (default 1). Checkpoints with another version are
// rejected with ErrSchemaVersion.
func WithSchemaVersion(v int) Option { return func(c *config) { c.schema = v } }

// ResumeOption configures one Resume call.
type ResumeOption func(*resumeConfig)

type resumeConfig struct {
	value    []byte
	hasValue bool
	err      error
}

// WithResume answers the pending interrupt with value, encoded as JSON. The
// interrupted Interrupt call returns it.
func WithResume(value any) ResumeOption {
	return func(rc *resumeConfig) {
		b, err := json.Marshal(value)
		if err != nil {
			rc.err = fmt.Errorf("%w: encode resume value: %w", ErrCodec, err)
			return
		}
		rc.value, rc.hasValue = b, true
	}
}
