package cliagent

import (
	"regexp"
	"strconv"
	"strings"
)

// outage returns why a failed session was its model provider's fault —
// unreachable, 5xx or 429 — or "" when nothing says so and the failure is
// the agent's. It reads, in order: Claude Code's result fields
// (api_error_status, api_error), the error text the agent reported
// (Claude Code's "API Error: 529 …", Codex's turn.failed and error events)
// and the end of its stderr. A session whose provider answered 4xx other
// than 408 and 429 (a refused request, a bad key) is not an outage.
//
// A session that ran past its limit is an outage when the agent was
// waiting for its model: nothing in its output says one of its tools was
// running (a hung provider, or one Codex keeps reconnecting to). It is the
// agent's failure when a tool it started had not finished (its command
// hung), unless its output says the provider was away.
func outage(run cliRun, res cliResult) string {
	if run.timedOut && run.busy == "" {
		return firstLine(outageLine(res.errText+"\n"+run.stderr), "no answer from the provider within the session limit")
	}
	if res.apiStatus != 0 {
		if transientStatus(res.apiStatus) {
			return firstLine(res.errText, "the provider answered "+strconv.Itoa(res.apiStatus))
		}
		return ""
	}
	if res.apiError != "" && strings.Contains(res.apiError, "connection") {
		return firstLine(res.errText, "the provider could not be reached ("+res.apiError+")")
	}
	texts := []string{res.errText, run.stderr}
	if res.claude && !strings.HasPrefix(strings.TrimSpace(res.errText), "API Error") {
		texts = texts[1:] // the agent's own last words, which may name anything
	}
	for _, text := range texts {
		if line := outageLine(text); line != "" {
			return line
		}
	}
	return ""
}

// outageText matches what Claude Code and Codex print when their provider
// is down, overloaded or rate limiting: an HTTP status 408, 429 or 5xx
// after "status" or "API Error:", the status texts, and the transport
// failures of Node and Rust clients.
var outageText = regexp.MustCompile(`(?i)(status:? (408|429|5\d\d)\b|API Error: (408|429|5\d\d)\b|too many requests|rate limit|service unavailable|bad gateway|gateway time-?out|internal server error|overloaded|high demand|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|connection (refused|reset|failed|error)|error sending request|waiting for network|stream disconnected|fetch failed|unable to connect)`)

// outageLine returns the first line of text that says the provider was
// unavailable, or "".
func outageLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if outageText.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// transientStatus reports whether an HTTP status is the provider's
// passing trouble: a timeout, a rate limit or a server error (Anthropic's
// 529 "overloaded" included).
func transientStatus(code int) bool {
	return code == 408 || code == 429 || code >= 500
}

// firstLine returns the first non-empty line of text, or def.
func firstLine(text, def string) string {
	for _, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return def
}
