package cli

import (
	"errors"
	"io/fs"
	"os"

	"github.com/gaffer-dev/gaffer/state"
)

// inputError is an input file named on the command line (a plan, a
// script) that cannot be read: a usage error (exit 2) that Report prints
// as the one line "gaffer: open FILE: …", without the pointer to --help.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// checkInput reports whether path is a regular file this process can
// read: a missing, unreadable file or a directory is an ExitUsage error.
func checkInput(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: &inputError{err}}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: &inputError{err}}
	}
	if fi.IsDir() {
		return &ExitError{Code: ExitUsage, Err: &inputError{&fs.PathError{Op: "open", Path: path, Err: errors.New("is a directory")}}}
	}
	return nil
}

// readInput reads the input file path, with checkInput's errors.
func readInput(path string) ([]byte, error) {
	if err := checkInput(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
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
