package state

import "errors"

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrInvalidValue is returned for an enumeration value that has no
	// name, or a name that is not one of the enumeration's.
	ErrInvalidValue = errors.New("state: invalid value")
	// ErrInvalidConfig is returned by RunConfig.Validate.
	ErrInvalidConfig = errors.New("state: invalid run config")
	// ErrInvalidPlan is matched by every *PlanError.
	ErrInvalidPlan = errors.New("state: invalid plan")
	// ErrDecode is returned by Decode for input that is not an encoded
	// state: bad JSON, unknown fields, a missing schema version.
	ErrDecode = errors.New("state: cannot decode execution state")
	// ErrSchemaVersion is returned by Decode for a state written by a
	// newer (or unknown) version of gaffer.
	ErrSchemaVersion = errors.New("state: unsupported schema version")
	// ErrNoPhase is returned for a phase index outside the plan.
	ErrNoPhase = errors.New("state: no such phase")
)
