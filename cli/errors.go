package cli

import (
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile"
)

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrUsage is wrapped by every usage error: an unknown command or
	// flag, a missing or extra argument, a flag value that is not allowed.
	ErrUsage = profile.ErrUsage
)

// Errors of the workflow commands (run, approve, resume, …).
var (
	// ErrNoRun is returned when no run fits a command given without RUN.
	ErrNoRun = host.ErrNoRun
	// ErrDirtyTree is returned by run for a work tree with changes.
	ErrDirtyTree = host.ErrDirtyTree
	// ErrUnsupportedDriver is returned for a driver this build cannot make.
	ErrUnsupportedDriver = profile.ErrUnsupportedDriver
)
