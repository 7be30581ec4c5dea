package postgres

import (
	"fmt"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// NewerError reports a database whose schema a newer gaffer has migrated
// past what this program knows. It matches checkpoint.ErrForeignStore: the
// store is refused as it is, and nothing in it is changed.
type NewerError struct {
	Store   string // the database (password hidden) and schema
	Version int    // the database's schema version
	Known   int    // the newest version this program knows
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("checkpoint: postgres store %s has schema version %d, newer than this gaffer knows (%d); use a newer gaffer",
		e.Store, e.Version, e.Known)
}

// Unwrap returns checkpoint.ErrForeignStore.
func (e *NewerError) Unwrap() error { return checkpoint.ErrForeignStore }
