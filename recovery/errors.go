package recovery

import "errors"

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrInvalidConfig is returned by Config.Validate for a setting that
	// makes no sense: a negative budget, a ratio outside [0, 1], a fatal
	// category with a built-in name or a pattern that does not compile.
	ErrInvalidConfig = errors.New("recovery: invalid config")
	// ErrMalformedAnswer is returned by ParseDoctorAnswer for text that is
	// not exactly one Doctor answer: not JSON, unknown or missing fields,
	// an unknown action, a confidence outside [0, 1].
	ErrMalformedAnswer = errors.New("recovery: malformed doctor answer")
	// ErrBudgetExhausted is returned by Reserve when a budget the call
	// needs is used up; the error names the budget.
	ErrBudgetExhausted = errors.New("recovery: budget exhausted")
	// ErrCallPending is returned by Reserve while another reserved call
	// has not been completed or abandoned.
	ErrCallPending = errors.New("recovery: a reserved call is pending")
	// ErrNoPendingCall is returned by Complete and RetryPending when there
	// is no reserved call, or not the one named.
	ErrNoPendingCall = errors.New("recovery: no such pending call")
	// ErrAnchorTampered is returned by Anchor.Verify when the anchor's
	// tasks no longer hash to its frozen hash.
	ErrAnchorTampered = errors.New("recovery: goal anchor does not match its hash")
	// ErrNoTask is returned by FreezeAnchor for a phase task id that is not
	// in the plan.
	ErrNoTask = errors.New("recovery: no such task")
)
