package profile

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
)

// problems collects what stops a run from starting, so that `run` lists
// every one at once, before it writes anything, instead of the first (and
// the script's only after approval).
type problems struct{ errs []error }

// add records err, when it is not nil; a list of problems is added one
// by one.
func (p *problems) add(err error) {
	var pe *problemsError
	var plan *state.PlanError
	switch {
	case err == nil:
	case errors.As(err, &pe):
		p.errs = append(p.errs, pe.errs...)
	case errors.As(err, &plan) && len(plan.Problems) > 1:
		for _, pr := range plan.Problems { // each "FILE:LINE: message" is a problem of its own
			p.errs = append(p.errs, &host.Error{Code: host.Invalid, Err: &state.PlanError{File: plan.File, Problems: []state.Problem{pr}}})
		}
	default:
		p.errs = append(p.errs, err)
	}
}

// err returns nil, the one problem as it is, or a *host.Error listing all
// of them with the code that ranks first (rank): a usage error before an
// invalid plan or configuration before a precondition.
func (p *problems) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	if plan := onePlan(p.errs); plan != nil {
		return &host.Error{Code: host.Invalid, Err: plan} // its lines as they are
	}
	code := codeOf(p.errs[0])
	for _, e := range p.errs[1:] {
		if c := codeOf(e); rank(c) < rank(code) {
			code = c
		}
	}
	return &host.Error{Code: code, Err: &problemsError{errs: slices.Clone(p.errs)}}
}

// onePlan returns the one plan's problems errs are, as one PlanError;
// nil when errs hold any other problem.
func onePlan(errs []error) *state.PlanError {
	var all *state.PlanError
	for _, err := range errs {
		var pe *state.PlanError
		if !errors.As(err, &pe) || all != nil && pe.File != all.File {
			return nil
		}
		if all == nil {
			all = &state.PlanError{File: pe.File}
		}
		all.Problems = append(all.Problems, pe.Problems...)
	}
	return all
}

// JoinProblems is errs (nil ones left out) as run reports them: nil, the
// one problem as it is, or every problem listed, each on its own line, a
// list among them flattened, with the exit code of the first kind (usage,
// then invalid, then refused). The command line adds its own problems
// (a bad flag value) to Setup.Preflight's this way.
func JoinProblems(errs ...error) error {
	var p problems
	for _, err := range errs {
		p.add(err)
	}
	return p.err()
}

// problemsError is several problems found before a run starts. Its
// message lists each on its own indented line(s).
type problemsError struct{ errs []error }

func (e *problemsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the run cannot start, %d problems:", len(e.errs))
	for _, err := range e.errs {
		msg := err.Error()
		if codeOf(err) == host.Usage {
			msg = strings.TrimPrefix(plain(msg), ErrUsage.Error()+": ")
		}
		for _, l := range strings.Split(plain(msg), "\n") {
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *problemsError) Unwrap() []error { return e.errs }

// checkScript loads the script driver's file when the run names one, so
// that a mistake in it is reported before the run starts rather than when
// the first agent needs it. A file checkInputs found unreadable is not
// loaded (preflight).
func (o *request) checkScript() error {
	if o.Script == "" {
		return nil
	}
	_, err := script.Load(o.Script)
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return errorf(host.Invalid, "%w", err)
	}
	var p problems // every problem of the script, each on its line
	for _, e := range j.Unwrap() {
		p.add(errorf(host.Invalid, "%w", e))
	}
	return p.err()
}

// checkExecutables looks up the program of every CLI agent a role of rp
// uses: a program that is not on PATH is a precondition, as a missing key
// is, found before the run starts rather than by the first session.
func checkExecutables(rp runProfile, lookPath func(string) (string, error)) error {
	var p problems
	seen := map[string]bool{}
	for _, r := range roles() {
		ac := rp.agents.Role(string(r))
		if ac.Driver != "cli" || seen[ac.Agent] {
			continue
		}
		seen[ac.Agent] = true
		t, ok := rp.drivers.CLIAgents[ac.Agent]
		if !ok || len(t.Command) == 0 {
			continue
		}
		if _, err := lookPath(t.Command[0]); err != nil {
			p.add(errorf(host.Refused, "the %s's CLI agent %q runs %q, which is not on PATH (install it, or change agents.%s.command in gaffer.yaml)",
				r, ac.Agent, t.Command[0], ac.Agent))
		}
	}
	return p.err()
}

// lookPath is exec.LookPath.
func lookPath(name string) (string, error) { return exec.LookPath(name) }

// preflight checks everything `run` can check before it writes anything:
// the flags and input files, the script, the profile, the CLI agents'
// programs and API keys (in getenv), and the plan; it returns every
// problem found.
// A file that cannot be read hides no other: a missing script is listed
// with the plan's problems.
func (o *request) preflight(repoDir string, getenv func(string) string) error {
	var probs problems
	inputs := o.checkInputs()
	if errors.Is(inputs, ErrUsage) {
		return inputs // neither --plan nor --goal, or both
	}
	probs.add(inputs)
	// Each file is opened once here (a FIFO has one writer): what
	// checkInputs found unreadable is not read again.
	if !unreadable(inputs, "--script") {
		probs.add(o.checkScript())
	}
	probs.add(o.resolve(repoDir, getenv))
	if !unreadable(inputs, "--plan") {
		probs.add(o.validatePlan())
	}
	return probs.err()
}

// unreadable reports whether err, checkInputs' problems, holds flag's
// file as one that cannot be read.
func unreadable(err error, flag string) bool {
	if err == nil {
		return false
	}
	var ie *InputError
	if errors.As(err, &ie) && ie.Flag == flag {
		return true
	}
	var list interface{ Unwrap() []error }
	if errors.As(err, &list) {
		for _, e := range list.Unwrap() {
			if unreadable(e, flag) {
				return true
			}
		}
	}
	return false
}
