package graph

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errors returned by the package. Test for them with errors.Is. Store errors
// (checkpoint.ErrFenced, *checkpoint.LeaseHeldError, ...) are wrapped with %w
// and pass through unchanged, so errors.Is and errors.As see them.
var (
	// ErrInvalidGraph is matched by every error Compile returns.
	ErrInvalidGraph = errors.New("graph: invalid graph")
	// ErrNotInterrupted is returned by Resume with WithResume for a run that
	// is not waiting on an interrupt.
	ErrNotInterrupted = errors.New("graph: run is not interrupted")
	// ErrInterrupted is returned by Resume without WithResume for a run that
	// waits on a dynamic interrupt: only an answer can move it on.
	ErrInterrupted = errors.New("graph: run is interrupted; resume it with WithResume")
	// ErrStepLimit is returned when a run reaches the step limit.
	ErrStepLimit = errors.New("graph: step limit reached")
	// ErrRunDone is returned by Resume for a run that has finished.
	ErrRunDone = errors.New("graph: run is done")
	// ErrRunExists is returned by Run (and Fork) for a run id that already has checkpoints.
	ErrRunExists = errors.New("graph: run already exists")
	// ErrRunNotFound is returned for a run id with no checkpoints.
	ErrRunNotFound = errors.New("graph: run not found")
	// ErrNoStore is returned by the methods that need a store when the
	// Runner was compiled without one.
	ErrNoStore = errors.New("graph: runner has no store")
	// ErrUnknownNode is returned for a node name that is not in the graph.
	ErrUnknownNode = errors.New("graph: unknown node")
	// ErrNoMerge is returned when a step runs several nodes and the graph was
	// compiled without WithMerge.
	ErrNoMerge = errors.New("graph: fan-out without a merge function")
	// ErrNodeTimeout is wrapped when a node runs longer than its Timeout.
	ErrNodeTimeout = errors.New("graph: node timed out")
	// ErrCodec is matched by every state encoding or decoding failure.
	ErrCodec = errors.New("graph: codec")
	// ErrUnknownField is returned by JSONCodec.Decode for a value whose field
	// is not in the state type.
	ErrUnknownField = errors.New("graph: unknown state field")
	// ErrMissingField is returned by JSONCodec.Decode when a field of the
	// state type has no value.
	ErrMissingField = errors.New("graph: missing state field")
	// ErrSchemaVersion is returned when a checkpoint was written with a
	// schema version other than the runner's.
	ErrSchemaVersion = errors.New("graph: unknown schema version")
	// ErrConflict is returned when branches of one step write a field that
	// has no reducer (LangGraph's InvalidUpdateError).
	ErrConflict = errors.New("graph: conflicting writes")
	// ErrNoParent is returned when a node returns a Command with Parent in
	// a run that is not a subgraph's.
	ErrNoParent = errors.New("graph: command to the parent graph outside a subgraph")
)

// NodeError reports the failure of a node (or of the router after it) in a
// step. It unwraps to the cause.
type NodeError struct {
	Node string
	Step int
	Err  error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("graph: node %s failed in step %d: %v", e.Node, e.Step, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// CompileError lists every structural problem Compile found. It matches
// ErrInvalidGraph.
type CompileError struct {
	Problems []string
}

func (e *CompileError) Error() string {
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	s := fmt.Sprintf("graph: invalid graph (%d %s)", len(e.Problems), noun)
	for _, p := range e.Problems {
		s += "\n\t" + p
	}
	return s
}

// Is reports whether target is ErrInvalidGraph.
func (e *CompileError) Is(target error) bool { return target == ErrInvalidGraph }

// CheckpointError reports a checkpoint that cannot be turned back into a
// state: the run, the sequence number and the cause.
type CheckpointError struct {
	RunID string
	Seq   uint64
	Err   error
}

func (e *CheckpointError) Error() string {
	return fmt.Sprintf("graph: run %s checkpoint %d: %v", e.RunID, e.Seq, e.Err)
}

func (e *CheckpointError) Unwrap() error { return e.Err }

// InterruptError is returned by Interrupt when the run must stop and wait for
// outside input. A node must return it (or an error wrapping it) unchanged.
type InterruptError struct {
	Index   int             // which Interrupt call of the node (0-based)
	Payload json.RawMessage // the payload given to Interrupt, as JSON

	kind string // KindStop for a stream's stop inside a subgraph; "" for KindDynamic
}

func (e *InterruptError) Error() string {
	return fmt.Sprintf("graph: interrupt %d: %s", e.Index, e.Payload)
}
