package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/state"
)

// Exit codes of the gaffer command.
//
//	0  ExitOK                the command succeeded; for run and resume, the run completed
//	1  ExitFailure           an unexpected error; a run stopped by a signal or by the machine's disk (resume continues it)
//	2  ExitUsage             a usage error: unknown command or flag, wrong arguments, bad flag value (--driver),
//	                         an input file (plan, script) that is missing, unreadable, a directory or
//	                         no regular file (a device such as /dev/zero, a socket; a pipe is read),
//	                         a RUN that is not a run id
//	3  ExitInvalid           the plan or the configuration is invalid, or over its size limit
//	                         (plan 1 MiB, gaffer.yaml 1 MiB, script 16 MiB), or gaffer.yaml is no regular file
//	4  ExitAwaitingApproval  the run stopped to wait for a human to approve or reject the plan
//	5  ExitHalted            the run ended halted or failed (or was cancelled)
//	6  ExitRejected          the human rejected the plan
//	7  ExitLocked            the run, the store or the work tree is held by another process
//	8  ExitPrecondition      a precondition failed: dirty work tree, not a git repository, missing API key,
//	                         no agent session recorded (yet) for logs
//	9  ExitStopped           the run stopped on an error and is still running (status: running, stopped): resume continues it
const (
	ExitOK               = 0
	ExitFailure          = 1
	ExitUsage            = 2
	ExitInvalid          = 3
	ExitAwaitingApproval = 4
	ExitHalted           = 5
	ExitRejected         = 6
	ExitLocked           = 7
	ExitPrecondition     = 8
	ExitStopped          = 9
)

// ExitError is an error with the exit code the command should end with.
// Commands return it (wrapped or not) and main passes the error to
// ExitCode; nothing below main exits the process. An ExitError with a nil
// Err sets the code without a message, for a command that has already
// said what happened (a run left waiting for approval).
type ExitError struct {
	Code int
	Err  error
}

// Error returns the cause's message.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf returns an ExitError with ExitUsage wrapping ErrUsage.
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))}
}

// ExitCode returns the exit code for err, the error a command returned:
// 0 for nil, the Code of an *ExitError in its chain, and otherwise the code
// its kind calls for (an invalid plan or config is 3, a held lease 7, a
// directory that is not a git repository or a damaged store 8, a usage
// error 2); anything else is 1.
func ExitCode(err error) int {
	var ee *ExitError
	var he *host.Error
	var coder ucli.ExitCoder
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &he):
		return hostExitCode(he.Code)
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, config.ErrInvalid):
		return ExitInvalid
	}
	if c, ok := host.Classify(err); ok {
		return hostExitCode(c)
	}
	if errors.As(err, &coder) {
		// urfave/cli makes these only for usage problems ("No help topic").
		return ExitUsage
	}
	return ExitFailure
}

// hostExitCode is the exit code of a refusal of the run host.
func hostExitCode(c host.Code) int {
	switch c {
	case host.Usage:
		return ExitUsage
	case host.Invalid:
		return ExitInvalid
	case host.Held:
		return ExitLocked
	case host.Refused:
		return ExitPrecondition
	case host.Waiting:
		return ExitAwaitingApproval
	}
	return ExitFailure // Failure, Machine
}

// StatusExitCode returns the exit code for a run that stopped with status
// s: 0 completed, 4 awaiting approval, 5 halted, failed or cancelled, 6
// rejected. A run still running (stopped by a signal) is 1.
func StatusExitCode(s state.RunStatus) int {
	switch s {
	case state.RunCompleted:
		return ExitOK
	case state.RunAwaitingApproval:
		return ExitAwaitingApproval
	case state.RunHalted, state.RunFailed, state.RunCancelled:
		return ExitHalted
	case state.RunRejected:
		return ExitRejected
	}
	return ExitFailure
}

// Report writes err for a person to read: a plan's problems as
// "FILE:LINE: message" lines, anything else as "gaffer: message" (the
// cause and the fix, without the "cli: " prefix the package's sentinel
// errors carry for errors.Is), with a pointer to --help after a usage
// error other than an input file that cannot be read: the command's own
// (gaffer run --help) for a command's. It writes nothing
// for nil or for an ExitError without a cause.
func Report(w io.Writer, err error) {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) && ee.Err == nil {
		return
	}
	if pe := onlyPlanError(err); pe != nil {
		fmt.Fprintln(w, pe.Error())
		return
	}
	msg := userMessage(storeMessage(err).Error())
	var ie *profile.InputError
	if (errors.As(err, &ee) && ee.Code == ExitUsage || errors.Is(err, ErrUsage)) && !errors.As(err, &ie) {
		msg = strings.TrimPrefix(msg, ErrUsage.Error()+": ")
		fmt.Fprintf(w, "gaffer: %s\nRun '%s' for usage.\n", msg, strings.Join(strings.Fields("gaffer "+helpFor(err)+" --help"), " "))
		return
	}
	fmt.Fprintf(w, "gaffer: %s\n", msg)
}

// storeMessage returns, for a damaged store, the error in err's chain that
// names the store, what is damaged and the fix, without the "run R: graph:
// run R:" the commands and the runtime wrap it in; err otherwise.
func storeMessage(err error) error {
	if !errors.Is(err, checkpoint.ErrCorrupt) {
		return err
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "checkpoint: store ") {
			return e
		}
	}
	return err
}

// exitf returns an *ExitError with a formatted message (%w works).
func exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// userMessage drops the "cli: " package prefix of the sentinel errors
// (ErrNoRun, ErrDirtyTree, …) from a message shown to the user, at its
// start and after a wrapping "…: ".
func userMessage(msg string) string {
	for _, pkg := range []string{"cli: ", "host: ", "profile: "} {
		msg = strings.TrimPrefix(msg, pkg)
		msg = strings.ReplaceAll(msg, ": "+pkg, ": ")
	}
	return msg
}

// onlyPlanError returns the *state.PlanError err is, when an invalid plan
// is its only problem: a list of problems (a plan's lines and a bad
// driver) is reported whole.
func onlyPlanError(err error) *state.PlanError {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if pe, ok := e.(*state.PlanError); ok {
			return pe
		}
		if _, ok := e.(interface{ Unwrap() []error }); ok {
			return nil
		}
	}
	return nil
}
