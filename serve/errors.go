package serve

import "errors"

// Errors of the package. Test for them with errors.Is.
var (
	// ErrDraining is returned by Submit and Answer once Drain has started.
	ErrDraining = errors.New("serve: draining, not taking work")
	// ErrDuplicate is returned by Submit for a run already queued or executing.
	ErrDuplicate = errors.New("serve: run already queued or executing")
	// ErrDrained is the context cause of a run cut off by Drain.
	ErrDrained = errors.New("serve: drained at a checkpoint")
	// ErrCancelled is the context cause of a run stopped by Cancel.
	ErrCancelled = errors.New("serve: run cancelled")
	// ErrJournal is matched by a journal that cannot be read or written.
	ErrJournal = errors.New("serve: journal")
	// ErrInvalidConfig is returned by New for a Config it cannot use.
	ErrInvalidConfig = errors.New("serve: invalid config")
)
