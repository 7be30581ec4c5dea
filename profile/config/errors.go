package config

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalid is matched by every *Error: a configuration file that does
	// not parse, has unknown keys or wrong types, or fails validation.
	ErrInvalid = errors.New("config: invalid configuration")
	// ErrSyntax is wrapped by the Error for a file that is not YAML.
	ErrSyntax = errors.New("not valid YAML")
	// ErrUnknownProfile is returned by Effective for a name no profile has.
	ErrUnknownProfile = errors.New("config: unknown profile")
)

// Error is a problem in a configuration file, with the line it is on when
// that is known. Every Error matches ErrInvalid.
type Error struct {
	File string // the file's path or name
	Line int    // 1-based; 0 when unknown
	Err  error
}

// Error returns "FILE:LINE: cause", or "FILE: cause" without a line.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }
