package agent

import (
	"context"
	"fmt"

	"github.com/gaffer-dev/gaffer/agent/internal/changes"
)

// RunStructured runs session s with d and parses its final output with
// parse (ParseReview, ParseEvaluation, or a function around ExtractPlan).
//
// When the output does not parse, the session is run once more, continuing
// the same conversation (Report.SessionID) with a prompt that shows the
// parse error and asks for the answer again. When that output does not
// parse either, RunStructured returns an error matching ErrBadOutput and
// wrapping the parse error, with the report marked failed.
//
// The report returned covers both runs: its usage is the sum, its files
// changed the union. An error from d.Run is returned as it is. A session
// that ran and failed (Status StatusFailed) is returned with a nil error
// and the zero T, as Driver.Run does: the caller treats it as a failed
// attempt.
func RunStructured[T any](ctx context.Context, d Driver, s Session, parse func(string) (T, error)) (T, Report, error) {
	var zero T
	rep, err := d.Run(ctx, s)
	if err != nil || rep.Status == StatusFailed {
		return zero, rep, err
	}
	v, perr := parse(rep.Output)
	if perr == nil {
		return v, rep, nil
	}
	retry := s
	retry.SessionID = rep.SessionID
	retry.Prompt = fmt.Sprintf("Your last answer could not be read: %v\n\n"+
		"Answer again with the complete corrected %s answer in the required format, and nothing else.", perr, s.Role)
	rep2, err := d.Run(ctx, retry)
	rep2 = mergeReports(rep, rep2)
	if err != nil || rep2.Status == StatusFailed {
		return zero, rep2, err
	}
	v, perr = parse(rep2.Output)
	if perr == nil {
		return v, rep2, nil
	}
	err = fmt.Errorf("%w: the %s's answer, asked for twice: %w", ErrBadOutput, s.Role, perr)
	rep2.Status, rep2.Error = StatusFailed, err.Error()
	return zero, rep2, err
}

// mergeReports returns the report of a second run that continued a first:
// the second's outcome with the usage summed and the files changed joined.
func mergeReports(first, second Report) Report {
	var changed changes.Set
	for _, p := range first.FilesChanged {
		changed.Add(p)
	}
	for _, p := range second.FilesChanged {
		changed.Add(p)
	}
	second.FilesChanged = changed.List()
	second.Usage = first.Usage.Add(second.Usage)
	if second.SessionID == "" {
		second.SessionID = first.SessionID
	}
	return second
}
