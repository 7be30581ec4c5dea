package cli

import (
	"errors"
	"fmt"
)

// The exit codes of gaffer. A run's outcome decides the code of the
// commands that drive it (run, approve, reject, resume, demo).
const (
	ExitOK               = 0 // done; a run completed
	ExitGeneral          = 1 // an unexpected error
	ExitUsage            = 2 // bad flags or arguments
	ExitInterrupted      = 3 // stopped by a signal or cancelled; `gaffer resume` continues it
	ExitAwaitingApproval = 4 // the run waits for `gaffer approve` or `gaffer reject`
	ExitFailed           = 5 // the run halted (out of attempts) or failed
	ExitRejected         = 6 // the plan was rejected
	ExitHeld             = 7 // another process holds the run or the store
	ExitPrecondition     = 8 // the repository is not fit to start (a dirty tree, no commits)
)

// ExitError is an error with the exit code it calls for. Its message is
// printed as one line.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// exitf returns an *ExitError with a formatted message (%w works).
func exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// ExitCode returns the exit code err calls for: 0 for nil, the code of an
// *ExitError, ExitGeneral otherwise.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitGeneral
}
