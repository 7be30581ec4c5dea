package recovery

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// Category is what kind of failure a phase attempt had. The built-in
// categories are the constants below; Config.Fatal adds named fatal
// categories (such as "wrong_tech_stack") that trigger a replan at once.
type Category string

// The built-in categories, as Classify tries them (first match wins).
const (
	CatNone        Category = ""                // no failure
	CatInfra       Category = "infra"           // provider 5xx or 429, transport error, refused key
	CatBudget      Category = "budget"          // a cost or token budget ran out
	CatTimeout     Category = "timeout"         // the session or a command timed out
	CatTruncation  Category = "truncation"      // the turn or token limit cut the session off
	CatToolError   Category = "tool_error"      // a tool call failed (bad edit, path escape, …)
	CatBuildError  Category = "build_error"     // the code does not compile or import
	CatTestFailure Category = "test_failure"    // tests ran and failed
	CatGaveUp      Category = "agent_gave_up"   // the agent reported failure with no test or build output
	CatReview      Category = "review_rejected" // the reviewer rejected the phase
)

// builtinCategories lists the built-in categories other than CatNone.
func builtinCategories() []Category {
	return []Category{CatInfra, CatBudget, CatTimeout, CatTruncation, CatToolError,
		CatBuildError, CatTestFailure, CatGaveUp, CatReview}
}

// String returns the category's name, or "none".
func (c Category) String() string {
	if c == CatNone {
		return "none"
	}
	return string(c)
}

// Builtin reports whether c is one of the built-in categories.
func (c Category) Builtin() bool {
	for _, b := range builtinCategories() {
		if c == b {
			return true
		}
	}
	return false
}

// DriverErrorKind is how an agent session ended when it did not end with
// a report: the kinds of error a driver returns, mapped by the caller
// (the workflow knows the agent package's sentinels; this package does
// not import it).
type DriverErrorKind int

// The driver error kinds. The zero value is DriverOK: the session
// returned a report.
const (
	DriverOK         DriverErrorKind = iota // no driver error
	DriverServer                            // the provider answered 5xx
	DriverRateLimit                         // the provider answered 429
	DriverTransport                         // the endpoint could not be reached
	DriverAuth                              // the endpoint refused the key
	DriverTimeout                           // the session's deadline passed
	DriverTurnLimit                         // the session used all its turns
	DriverTokenLimit                        // the model stopped at its output token limit
	DriverBudget                            // the run's cost or token budget ran out
	DriverTool                              // a tool failed in a way that ended the session
	DriverBadOutput                         // structured output did not parse
	DriverOther                             // any other driver error
)

func driverErrorNames() []string {
	return []string{"ok", "server", "rate_limit", "transport", "auth", "timeout",
		"turn_limit", "token_limit", "budget", "tool", "bad_output", "other"}
}

// String returns the kind's name, such as "rate_limit".
func (k DriverErrorKind) String() string {
	if n := driverErrorNames(); k >= 0 && int(k) < len(n) {
		return n[k]
	}
	return fmt.Sprintf("DriverErrorKind(%d)", int(k))
}

// Input is what a failed phase attempt really produced. The caller fills
// in what it has; Classify reads all of it.
type Input struct {
	// Driver is the kind of error the driver returned, DriverOK when it
	// returned a report.
	Driver DriverErrorKind `json:"driver,omitempty"`
	// DriverError is the driver error's text.
	DriverError string `json:"driver_error,omitempty"`
	// AgentFailed is set when the agent's report said it failed.
	AgentFailed bool `json:"agent_failed,omitempty"`
	// AgentError is the report's error text, in full (test output and all).
	AgentError string `json:"agent_error,omitempty"`
	// TestOutput is the output of a test command the workflow ran itself
	// (go test, npm test, pytest), empty when it ran none.
	TestOutput string `json:"test_output,omitempty"`
	// Review is the reviewer's verdict, nil when there was no review.
	Review *state.ReviewResult `json:"review,omitempty"`
}

// Text returns the error text of the attempt as one string: the driver
// error, the agent's error, the test output and the review's rejected
// points, each present part on its own lines. It is what fingerprints and
// similarity are computed from.
func (in Input) Text() string {
	var parts []string
	for _, s := range []string{in.DriverError, in.AgentError, in.TestOutput} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	if in.Review != nil && !in.Review.Approved {
		if c := strings.TrimSpace(in.Review.Comments); c != "" {
			parts = append(parts, c)
		}
		for _, it := range in.Review.Items {
			if it.Verdict == state.VerdictReject {
				continue // the evaluator threw this point out
			}
			parts = append(parts, "- "+strings.TrimSpace(it.Text))
		}
	}
	return strings.Join(parts, "\n")
}

// FatalRule makes a failure whose text matches Pattern (a Go regular
// expression) fall into the fatal category Name.
type FatalRule struct {
	Name    Category `json:"name" yaml:"name"`
	Pattern string   `json:"pattern" yaml:"pattern"`
}

// Patterns of test and build output. They are matched line by line
// against the attempt's text.
var (
	goBuildRe = lazyRegexp(`(?m)^(?:# \S+\r?\n[^\n]*\.go:\d+|FAIL\s+\S+\s+\[(?:build|setup) failed\]|.*\.go:\d+(?::\d+)?: (?:undefined|syntax error|cannot use|imported and not used|declared and not used|missing return|too many|not enough|invalid operation|cannot find package|no required module)|.*: cannot find module|package \S+ is not in std)`)
	tsBuildRe = lazyRegexp(`(?m)error TS\d+:`)
	pyBuildRe = lazyRegexp(`(?m)^\s*(?:SyntaxError|IndentationError|ModuleNotFoundError|ImportError)\b`)
	testRe    = lazyRegexp(`(?m)^(?:\s*--- FAIL: |FAIL\s+\S+\s+\d|FAIL$|panic: |\s*FAILED |=+ .*\bfailed\b|\s*✕ |Tests:\s+\d+ failed|AssertionError\b|\s*[●×] )`)
	// truncRe is how the llm driver's failed report says the session's
	// turn limit or token budget cut it off (agent/llm's loop).
	truncRe = lazyRegexp(`\bthe (?:turn limit of \d+ model calls was reached|token budget of \d+ was used up)\b`)
	infraRe = lazyRegexp(`(?i)\b(?:HTTP (?:429|5\d\d)|status (?:code )?(?:429|5\d\d)|rate limit(?:ed)?|overloaded|service unavailable|bad gateway|connection (?:refused|reset)|no such host|TLS handshake timeout)\b`)
)

// Classify returns the category of a failed attempt. It is deterministic:
// the same Input and rules always give the same category. The order is:
// a configured fatal rule whose pattern matches the attempt's text; the
// driver's error kind (infra, budget, timeout, truncation, tool error);
// a failed report saying the session's turn limit or token budget cut it
// off (truncation); build errors, then test failures, found in the test output and the
// agent's error (Go, TypeScript and Python); an infra error named in the
// text; a review rejection; then agent_gave_up for any other failure the
// agent reported. An Input that shows no failure is CatNone.
//
// fatal must be valid (Config.Validate checks it); a rule whose pattern
// does not compile is skipped.
func Classify(in Input, fatal []FatalRule) Category {
	text := in.Text()
	for _, r := range fatal {
		if re, err := regexp.Compile(r.Pattern); err == nil && re.MatchString(text) {
			return r.Name
		}
	}
	switch in.Driver {
	case DriverServer, DriverRateLimit, DriverTransport, DriverAuth:
		return CatInfra
	case DriverBudget:
		return CatBudget
	case DriverTimeout:
		return CatTimeout
	case DriverTurnLimit, DriverTokenLimit:
		return CatTruncation
	case DriverTool, DriverBadOutput:
		return CatToolError
	}
	if in.AgentFailed && truncRe().MatchString(in.AgentError) {
		return CatTruncation
	}
	out := in.TestOutput + "\n" + in.AgentError
	switch {
	case goBuildRe().MatchString(out) || tsBuildRe().MatchString(out) || pyBuildRe().MatchString(out):
		return CatBuildError
	case testRe().MatchString(out):
		return CatTestFailure
	case in.Driver == DriverOther && infraRe().MatchString(in.DriverError):
		return CatInfra
	case in.Review != nil && !in.Review.Approved:
		return CatReview
	case in.AgentFailed || in.Driver == DriverOther:
		return CatGaveUp
	}
	return CatNone
}
