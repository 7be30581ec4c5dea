package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/state"
)

// Errors of the package. Test for them with errors.Is.
var (
	// ErrUsage is wrapped by every refusal of a request's shape or of a
	// flag's value (host.Usage): neither --plan nor --goal, an unknown
	// --profile or --driver. A front end may point to its help after it.
	ErrUsage = errors.New("usage error")
	// ErrUnsupportedDriver is a driver this build cannot make.
	ErrUnsupportedDriver = errors.New("unsupported driver")
)

// InputError is an input file a spec names (a plan, a script) that cannot
// be read: a host.Usage refusal whose message is one line, which needs no
// pointer to a front end's help. With Flag it names the flag that gave
// the file ("--script nope.yaml: no such file"); without, the failed
// operation ("open FILE: …").
type InputError struct {
	Flag string // "--plan", "--script"; "" for a file given otherwise
	Err  error
}

func (e *InputError) Error() string {
	var pe *fs.PathError
	if e.Flag == "" || !errors.As(e.Err, &pe) {
		return e.Err.Error()
	}
	cause := pe.Err.Error()
	if errors.Is(pe.Err, fs.ErrNotExist) {
		cause = "no such file"
	}
	return fmt.Sprintf("%s %s: %s", e.Flag, pe.Path, cause)
}

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// errorf returns a *host.Error of code with a formatted cause (%w works).
func errorf(code host.Code, format string, args ...any) error {
	return &host.Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// usageErrorf returns a host.Usage refusal wrapping ErrUsage.
func usageErrorf(format string, args ...any) error {
	return &host.Error{Code: host.Usage, Err: fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))}
}

// codeOf is the host.Code of err: its *host.Error's, else the one its
// kind calls for (an invalid plan or configuration, a missing key).
func codeOf(err error) host.Code {
	var he *host.Error
	switch {
	case errors.As(err, &he):
		return he.Code
	case errors.Is(err, ErrUsage):
		return host.Usage
	case errors.Is(err, state.ErrInvalidPlan), errors.Is(err, state.ErrInvalidConfig), errors.Is(err, config.ErrInvalid):
		return host.Invalid
	case errors.Is(err, agent.ErrMissingKey), errors.Is(err, agent.ErrAuth):
		return host.Refused
	}
	return host.Failure
}

// rank orders codes for a list of problems, the first that says most
// about what to fix: the request's shape (Usage) before an invalid plan
// or configuration (Invalid) before a precondition (Refused).
func rank(c host.Code) int {
	switch c {
	case host.Usage:
		return 0
	case host.Invalid:
		return 1
	case host.Refused:
		return 2
	}
	return 3
}

// plain drops the package prefixes of sentinel errors ("host: ") from a
// message shown to a person.
func plain(msg string) string {
	for _, pkg := range []string{"host: ", "profile: "} {
		msg = strings.TrimPrefix(msg, pkg)
		msg = strings.ReplaceAll(msg, ": "+pkg, ": ")
	}
	return msg
}
