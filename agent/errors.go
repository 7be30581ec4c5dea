package agent

import (
	"errors"
	"fmt"

	"github.com/gaffer-dev/gaffer/agent/internal/proc"
)

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrUnknownRole is returned for a Session whose Role is not one of the four roles.
	ErrUnknownRole = errors.New("agent: unknown role")
	// ErrNoJSON is returned by ParseReview and ParseEvaluation when the output
	// holds no JSON object.
	ErrNoJSON = errors.New("agent: no JSON object in output")
	// ErrInvalidResult is returned by ParseReview and ParseEvaluation when the
	// JSON object does not have the required shape.
	ErrInvalidResult = errors.New("agent: invalid structured result")
	// ErrPathEscape is returned for a path that is absolute or leads outside
	// the repository, directly or through a symbolic link.
	ErrPathEscape = errors.New("agent: path escapes the repository")
	// ErrProtectedPath is returned for a change under the repository's .git
	// directory, where gaffer keeps its store.
	ErrProtectedPath = errors.New("agent: path is inside .git")
	// ErrEditNotFound is returned when an edit's old text is not in the file.
	ErrEditNotFound = errors.New("agent: old text not found")
	// ErrEditAmbiguous is returned when an edit's old text occurs more than once.
	ErrEditAmbiguous = errors.New("agent: old text is ambiguous")
	// ErrToolNotAllowed is returned for a tool the session was not given.
	ErrToolNotAllowed = errors.New("agent: tool not allowed in this session")
	// ErrProcessGroup is returned when a command could not be started
	// because its process group could not be recorded (gaffer.groups is
	// unwritable, its disk full): gaffer failed, not the agent, so the
	// session could not run rather than failed.
	ErrProcessGroup = proc.ErrGroup
	// ErrMissingKey is returned by llm.NewDriver when the environment variable
	// that should hold the API key is unset or empty; the error names it.
	ErrMissingKey = errors.New("agent: missing API key")
	// ErrAuth is returned by the llm driver when the model's endpoint refuses
	// the API key (HTTP 401 or 403); the error names the variable it came from.
	ErrAuth = errors.New("agent: the model endpoint refused the API key")
	// ErrModel is returned by the llm driver when a model call fails for good:
	// retries used up on rate limits, server errors or an unreachable
	// endpoint, or a request the endpoint rejects.
	ErrModel = errors.New("agent: model call failed")
	// ErrUnavailable is returned by a driver whose model provider could
	// not be reached or answered 5xx or 429 (overloaded, rate limited)
	// until the driver, or the agent it ran, gave up: the machine's fault,
	// not the agent's. The workflow stops the run resumably on it and
	// spends no attempt, no Doctor call and no replan.
	ErrUnavailable = errors.New("agent: the model provider is unavailable")
	// ErrBadOutput is returned by RunStructured when a session's final output
	// still does not parse after one retry; it wraps the parse error.
	ErrBadOutput = errors.New("agent: output does not parse")
)

// ToolError is a tool's failure: the operation, the path or command it was
// given, and the cause.
type ToolError struct {
	Op   string // write, edit, delete, mkdir, read, run
	Path string // the path (or command) as given
	Err  error
}

// Error returns "OP PATH: cause".
func (e *ToolError) Error() string { return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err) }

// Unwrap returns the cause.
func (e *ToolError) Unwrap() error { return e.Err }
