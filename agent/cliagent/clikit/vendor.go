package clikit

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/state"
)

// Vendor is one agent CLI's knowledge: its built-in template, how to read
// its output, when its failure is its provider's outage, what it must be
// allowed to write, and which of its arguments turn its own prompts off.
// Each vendor is a package of its own (agent/cliagent/claude, codex,
// gemini), listed in the cli driver's one table (cliagent's vendors.go).
type Vendor interface {
	// Name is the built-in template's name in gaffer.yaml ("claude").
	Name() string
	// Template returns the built-in template (a new value each call).
	Template() Template
	// Output is the output format Parse and Lines read: a template whose
	// Output is this one is read by the vendor, any other as text.
	Output() OutputFormat
	// Parse reads a session's whole stdout. It never fails: output not in
	// the format gives a Result with Parsed false.
	Parse(stdout []byte) Result
	// Lines returns a fresh parser of streamed stdout, line by line.
	Lines() LineParser
	// Outage returns why a failed session was its provider's fault —
	// unreachable, 5xx, 429 — or "" when the failure is the agent's.
	// Most vendors return CommonOutage.
	Outage(run Run, res Result) string
	// State returns the directories and files, in the command's
	// environment env, where the CLI keeps the state it must write (its
	// sessions, settings): a confined session may write beneath them, and
	// the directories are made when missing.
	State(env []string) (dirs, files []string)
	// Args returns the arguments to add to session s's command (say, the
	// tools it must not use), or nil.
	Args(s agent.Session) []string
	// SkipsPrompts says what arg turns off in the CLI (its permission
	// prompts, approvals or sandbox), or "" when it is not such a flag.
	SkipsPrompts(arg string) string
}

// Result is what a CLI agent's stdout says about its session.
type Result struct {
	Parsed    bool   // the output held the format's final result
	Text      string // the final text
	SessionID string
	Usage     state.Usage
	CostKnown bool // the agent reported its cost
	IsError   bool // the agent reported failure
	ErrText   string
	Messages  []agent.Message // what the session did, in order
	// APIStatus is the provider's HTTP status of a session that ended on
	// an API error, when the output says it (Claude Code's
	// api_error_status, Gemini CLI's error code); 0 otherwise.
	APIStatus int
	// APIError is the agent's name for a transport failure
	// ("connection_failed"), or "".
	APIError string
}

// Run is how a session's process ended, as Vendor.Outage reads it.
type Run struct {
	ExitCode int    // -1 when killed by a signal
	TimedOut bool   // it outlived Options.Timeout
	Busy     string // the tool it was running when it timed out; "" when waiting for its model or unknown
	Stderr   string // the end of its stderr
}

// LineParser returns the messages each line of an agent's streamed output
// carries. Fed the same lines in the same order, it gives the same
// messages as the vendor's Parse, so a driver can emit them as lines come
// and the rest at the end.
type LineParser interface {
	Messages(line []byte) []agent.Message
	// Busy returns the tool the agent is running, "" when none: it is
	// waiting for its model, or its output does not say.
	Busy() string
}

// Tools counts the tool calls a LineParser has seen started and not yet
// answered, for its Busy.
type Tools struct {
	running int
	last    string
}

// Start records a started tool call named name.
func (t *Tools) Start(name string) { t.running, t.last = t.running+1, name }

// Done records a finished tool call.
func (t *Tools) Done() { t.running = max(t.running-1, 0) }

// Busy returns the latest tool started while one is running, else "".
func (t *Tools) Busy() string {
	if t.running > 0 {
		return t.last
	}
	return ""
}

// CommonOutage is the outage classification vendors share. A session that
// ran past its limit is an outage when the agent was waiting for its model
// (Run.Busy is empty): a hung provider, or one the agent keeps
// reconnecting to. Otherwise res.APIStatus decides when set (408, 429 and
// 5xx are outages, other statuses are not), an APIError naming a
// connection is one, and else the first line of res.ErrText or the stderr
// that says the provider was away (see OutageLine). ownWords says
// res.ErrText is the agent's own last words, which may name anything, and
// is not read.
func CommonOutage(run Run, res Result, ownWords bool) string {
	if run.TimedOut && run.Busy == "" {
		return FirstLine(OutageLine(res.ErrText+"\n"+run.Stderr), "no answer from the provider within the session limit")
	}
	if res.APIStatus != 0 {
		if TransientStatus(res.APIStatus) {
			return FirstLine(res.ErrText, "the provider answered "+strconv.Itoa(res.APIStatus))
		}
		return ""
	}
	if res.APIError != "" && strings.Contains(res.APIError, "connection") {
		return FirstLine(res.ErrText, "the provider could not be reached ("+res.APIError+")")
	}
	texts := []string{res.ErrText, run.Stderr}
	if ownWords {
		texts = texts[1:]
	}
	for _, text := range texts {
		if line := OutageLine(text); line != "" {
			return line
		}
	}
	return ""
}

// outageText matches what agent CLIs print when their provider is down,
// overloaded or rate limiting: an HTTP status 408, 429 or 5xx after
// "status" or "API Error:", the status texts, and the transport failures
// of Node and Rust clients.
var outageText = regexp.MustCompile(`(?i)(status:? (408|429|5\d\d)\b|API Error: (408|429|5\d\d)\b|too many requests|rate limit|service unavailable|bad gateway|gateway time-?out|internal server error|overloaded|high demand|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|connection (refused|reset|failed|error)|error sending request|waiting for network|stream disconnected|fetch failed|unable to connect)`)

// OutageLine returns the first line of text that says the provider was
// unavailable, or "".
func OutageLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if outageText.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TransientStatus reports whether an HTTP status is the provider's
// passing trouble: a timeout, a rate limit or a server error (Anthropic's
// 529 "overloaded" included).
func TransientStatus(code int) bool {
	return code == 408 || code == 429 || code >= 500
}

// FirstLine returns the first non-empty line of text, or def.
func FirstLine(text, def string) string {
	for _, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return def
}

// Getenv returns the value of name in env (KEY=VALUE entries, the last
// one winning), or "".
func Getenv(env []string, name string) string { return environ.Get(env, name) }

// StateDir returns the directory a CLI keeps its state in, in env: the
// value of the variable override when set, else name under HOME (the
// process's home when env has none); "" when neither is known.
func StateDir(env []string, override, name string) string {
	if c := environ.Get(env, override); c != "" {
		return c
	}
	return InHome(env, name)
}

// InHome returns name under env's HOME (the process's home when env has
// none), or "" when there is no home.
func InHome(env []string, name string) string {
	home := environ.Get(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, name)
}
