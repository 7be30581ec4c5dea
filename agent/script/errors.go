package script

import (
	"errors"
	"fmt"
)

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrNotScripted is returned by the script driver for a session its script
	// has no answer for and no default: an architect with no plan, an evaluator
	// with no entry.
	ErrNotScripted = errors.New("agent: nothing scripted for this session")
	// ErrInvalid is matched by every *Error.
	ErrInvalid = errors.New("agent: invalid script")
)

// Error is a problem with a script file, with the line it is on when
// that is known. Every Error matches ErrInvalid.
type Error struct {
	File string // the script's path or name
	Line int    // 1-based; 0 when unknown
	Err  error
}

// Error returns "script FILE: line N: cause".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("script %s: line %d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("script %s: %v", e.File, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }
