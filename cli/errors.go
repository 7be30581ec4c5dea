package cli

import "errors"

// Errors returned by the commands. Test for them with errors.Is.
var (
	// ErrNoRun is returned when no run fits a command given without RUN.
	ErrNoRun = errors.New("cli: no run fits")
	// ErrDirtyTree is returned by run for a work tree with changes.
	ErrDirtyTree = errors.New("cli: work tree has uncommitted changes")
	// ErrUnsupportedDriver is returned for a driver this build cannot make.
	ErrUnsupportedDriver = errors.New("cli: unsupported driver")
)
