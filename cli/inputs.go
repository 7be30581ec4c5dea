package cli

import (
	"errors"
	"fmt"

	"github.com/gaffer-dev/gaffer/internal/inputfile"
	"github.com/gaffer-dev/gaffer/state"
)

// inputError is an input file named on the command line (a plan, a
// script) that cannot be read: a usage error (exit 2) that Report prints
// as the one line "gaffer: open FILE: …", without the pointer to --help.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// checkInput reports whether path is a file this process can read: a
// missing or unreadable file, a directory, or what is not a regular file
// or a pipe (/dev/zero, a socket) is an ExitUsage error.
func checkInput(path string) error {
	if err := inputfile.Check(path, inputfile.Options{Pipes: true}); err != nil {
		return &ExitError{Code: ExitUsage, Err: &inputError{err}}
	}
	return nil
}

// readPlan reads the plan file path, at most state.MaxPlanBytes, with
// checkInput's errors; a longer plan is an ExitInvalid error, as a plan
// over its other limits is.
func readPlan(path string) ([]byte, error) {
	b, err := inputfile.Read(path, state.MaxPlanBytes, inputfile.Options{Pipes: true})
	switch {
	case errors.Is(err, inputfile.ErrTooLarge):
		return nil, &ExitError{Code: ExitInvalid, Err: &state.PlanError{File: path, Problems: []state.Problem{{
			Msg: fmt.Sprintf("the plan is over the limit of %d (%s); split it into smaller plans", state.MaxPlanBytes, inputfile.Size(state.MaxPlanBytes))}}}}
	case err != nil:
		return nil, &ExitError{Code: ExitUsage, Err: &inputError{err}}
	}
	return b, nil
}

// maxGoalBytes is the longest --goal, in bytes: 64 KiB, the limit of one
// task of a plan. The goal goes into the architect's prompt and into every
// checkpoint of the run.
const maxGoalBytes = 64 << 10

// checkInputs checks run's flags before anything is opened: exactly one of
// --plan and --goal (alone, when it fails), a goal within maxGoalBytes
// (exit 3, as a plan over its limits), and the plan and script files
// readable (all listed when several are wrong).
func (o *RunOptions) checkInputs() error {
	switch { // the shape of the call first: nothing else is worth saying
	case o.PlanFile == "" && o.Goal == "":
		return usageErrorf("give --plan FILE or --goal TEXT")
	case o.PlanFile != "" && o.Goal != "":
		return usageErrorf("give --plan FILE or --goal TEXT, not both")
	}
	var probs problems
	if n := len(o.Goal); n > maxGoalBytes {
		probs.add(exitf(ExitInvalid, "the goal is %d bytes, over the limit of %d (%s); shorten it, or write the plan and give --plan FILE",
			n, maxGoalBytes, "64 KiB"))
	}
	for _, p := range []string{o.PlanFile, o.Script} {
		if p != "" {
			probs.add(checkInput(p))
		}
	}
	return probs.err()
}

// validatePlan parses --plan under its own name with the profile's TDD
// setting (resolve has run), so that an invalid plan is exit 3 with every
// problem as "FILE:LINE: message" before a store or a run exists.
func (o *RunOptions) validatePlan() error {
	if o.PlanFile == "" {
		return nil
	}
	src, err := o.planSource()
	if err != nil {
		return err
	}
	var opts []state.ParseOption
	if o.profile != nil && o.profile.skipTDD {
		opts = append(opts, state.WithoutTDDCheck())
	}
	if _, err := state.ParsePlan(o.PlanFile, string(src), opts...); err != nil {
		var pe *state.PlanError
		if errors.As(err, &pe) {
			return &ExitError{Code: ExitInvalid, Err: pe}
		}
		return exitf(ExitInvalid, "plan %s: %w", o.PlanFile, err)
	}
	return nil
}
