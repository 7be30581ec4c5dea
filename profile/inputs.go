package profile

import (
	"errors"
	"fmt"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/inputfile"
	"github.com/gaffer-dev/gaffer/state"
)

// checkInput reports whether path, given by flag, is a file this process
// can read: a missing or unreadable file, a directory, or what is not a
// regular file or a pipe (/dev/zero, a socket) is a host.Usage error
// naming the flag.
func checkInput(flag, path string) error {
	if err := inputfile.Check(path, inputfile.Options{Pipes: true}); err != nil {
		return &host.Error{Code: host.Usage, Err: &InputError{Flag: flag, Err: err}}
	}
	return nil
}

// ReadInput reads the plan file path, at most state.MaxPlanBytes, with
// checkInput's errors; a longer plan is a host.Invalid error in the plan's
// own one-line form, as a plan over its other limits is.
func ReadInput(path string) ([]byte, error) {
	b, err := inputfile.Read(path, state.MaxPlanBytes, inputfile.Options{Pipes: true})
	switch {
	case errors.Is(err, inputfile.ErrTooLarge):
		return nil, &host.Error{Code: host.Invalid, Err: &state.PlanError{File: path, Problems: []state.Problem{{
			Msg: fmt.Sprintf("the plan is over the limit of %d (%s); split it into smaller plans", state.MaxPlanBytes, inputfile.Size(state.MaxPlanBytes))}}}}
	case err != nil:
		return nil, &host.Error{Code: host.Usage, Err: &InputError{Err: err}}
	}
	return b, nil
}

// MaxGoalBytes is the longest --goal, in bytes: 64 KiB, the limit of one
// task of a plan. The goal goes into the architect's prompt and into every
// checkpoint of the run.
const MaxGoalBytes = 64 << 10

// checkInputs checks run's flags before anything is opened: exactly one of
// --plan and --goal (alone, when it fails), a goal within MaxGoalBytes
// (exit 3, as a plan over its limits), and the plan and script files
// readable (all listed when several are wrong).
func (o *request) checkInputs() error {
	switch { // the shape of the call first: nothing else is worth saying
	case o.PlanFile == "" && o.Goal == "":
		return usageErrorf("give --plan FILE or --goal TEXT")
	case o.PlanFile != "" && o.Goal != "":
		return usageErrorf("give --plan FILE or --goal TEXT, not both")
	}
	var probs problems
	if n := len(o.Goal); n > MaxGoalBytes {
		probs.add(errorf(host.Invalid, "the goal is %d bytes, over the limit of %d (%s); shorten it, or write the plan and give --plan FILE",
			n, MaxGoalBytes, "64 KiB"))
	}
	for _, in := range [][2]string{{"--plan", o.PlanFile}, {"--script", o.Script}} {
		if in[1] != "" {
			probs.add(checkInput(in[0], in[1]))
		}
	}
	return probs.err()
}

// validatePlan parses --plan under its own name with the profile's TDD
// setting (resolve has run), so that an invalid plan is exit 3 with every
// problem as "FILE:LINE: message" before a store or a run exists.
func (o *request) validatePlan() error {
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
	if o.profile != nil {
		opts = append(opts, state.WithMode(o.profile.mode))
	}
	if _, err := state.ParsePlan(o.PlanFile, string(src), opts...); err != nil {
		var pe *state.PlanError
		if errors.As(err, &pe) {
			return &host.Error{Code: host.Invalid, Err: pe}
		}
		return errorf(host.Invalid, "plan %s: %w", o.PlanFile, err)
	}
	return nil
}
