package nodes

import "errors"

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrInvalidConfig is returned by Build for a Config it cannot use.
	ErrInvalidConfig = errors.New("nodes: invalid config")
	// ErrNoDriver is returned when the driver factory has no driver for a
	// role the workflow needs.
	ErrNoDriver = errors.New("nodes: no driver for role")
	// ErrBadAnswer is returned by the approval node for a resume value that
	// is not an Answer.
	ErrBadAnswer = errors.New("nodes: bad approval answer")
	// ErrNoPhase is returned when the state names a phase the plan does not
	// have: a state that was not built by these nodes.
	ErrNoPhase = errors.New("nodes: no current phase")
)
