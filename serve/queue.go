package serve

import (
	"context"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
)

// Queue is the run queue behind `gaffer serve`: the jobs submitted, and
// the workers that claim and execute them. *LocalQueue keeps it in a journal
// file beside the store, for one process (the embedded default);
// package serve/pgqueue keeps it in PostgreSQL, where the serves of many
// hosts claim from one jobs table and take over each other's runs. The
// front of serve (package host) works through this interface only.
//
// A queue that is not started is a client: Submit, Answer, Cancel,
// Status and LastError work on it (pgqueue's from any host), and nothing
// is executed.
type Queue interface {
	// Start starts the workers under ctx.
	Start(ctx context.Context) error
	// Submit queues a job: ErrDuplicate for a run queued or executing,
	// ErrDraining once Drain has begun.
	Submit(job Job) error
	// Answer queues the answer to a parked run's pending interrupt.
	Answer(runID string, answer any) error
	// Cancel takes the run's job out of the queue, or stops it where it
	// executes (context cause ErrCancelled); it reports whether it found
	// the run.
	Cancel(runID string) bool
	// Observe is subscribed to the runtime's events (drain at checkpoints).
	Observe(e graph.Event)
	// Drain stops taking work and lets executing runs reach a checkpoint,
	// at most timeout; the jobs cut off stay queued.
	Drain(timeout time.Duration)
	// Wait waits for the workers to stop.
	Wait()
	// Status is a snapshot: the jobs queued and executing (for pgqueue,
	// on every host) and this process's workers.
	Status() Status
	// LastError is the error the run's last job ended with, if any.
	LastError(runID string) string
}

var _ Queue = (*LocalQueue)(nil)
