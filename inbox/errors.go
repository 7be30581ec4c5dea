package inbox

import "errors"

// Errors of the package. Test for them with errors.Is.
var (
	// ErrNoService is a Config without a Service.
	ErrNoService = errors.New("inbox: no service")
)
