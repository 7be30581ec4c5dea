package cli

import "errors"

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrUsage is wrapped by every usage error: an unknown command or
	// flag, a missing or extra argument, a flag value that is not allowed.
	ErrUsage = errors.New("usage error")
)
