package state

import (
	"errors"
	"fmt"
	"strings"
)

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

// Problem is one thing wrong with a plan: the line it is on (1-based; 0
// when it concerns the whole plan), the ids of the tasks involved and a
// message that names them.
type Problem struct {
	Line    int      `json:"line"`
	TaskIDs []string `json:"task_ids,omitempty"`
	Msg     string   `json:"message"`
}

// String returns "LINE: message", or the message alone for line 0.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// PlanError lists every problem ParsePlan found in a plan, in line order.
// It matches ErrInvalidPlan.
type PlanError struct {
	File     string // the plan's name as given to ParsePlan
	Problems []Problem
}

// Error returns one "FILE:LINE: message" line per problem ("FILE: message"
// for problems of the whole plan), joined by newlines.
func (e *PlanError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		if p.Line > 0 {
			b.WriteByte(':')
		} else {
			b.WriteString(": ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes every PlanError match ErrInvalidPlan.
func (e *PlanError) Is(target error) bool { return target == ErrInvalidPlan }
