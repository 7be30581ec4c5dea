package story

import "errors"

// Errors of package story.
var (
	// ErrBadRecord: a story record's file does not decode.
	ErrBadRecord = errors.New("story: bad record")
	// ErrOverBudget: even the verbatim items do not fit the budget.
	ErrOverBudget = errors.New("story: over budget")
	// ErrRejectedSummary: a summarizer's text may not replace the
	// deterministic one (over budget, an item lost, or a fact invented).
	ErrRejectedSummary = errors.New("story: summary rejected")
)
