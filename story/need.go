package story

import (
	"regexp"
	"strings"
	"unicode"
)

// Shedding by need (issue 33). Under budget pressure a story leaves out
// what later phases are least likely to need, whatever kind of record
// holds it: a sentence of a session's summary, a review's sentence, a
// recommendation, a TODO, a decision's reason, a decision. Each such
// unit is scored from its own words:
//
//   - it states a constraint (constraintRe: never, must, a limit, a
//     window, a port, a deadline, a quantity with a unit, a time of day);
//   - the work still to come names it (Need: the goal and the tasks of
//     the phase the story is for and of the later ones): it shares a
//     word with that text that few units share (a word most units have,
//     such as the goal's, tells nothing);
//   - it gives a name (an identifier, a path, a host:port, a header);
//   - and, to break ties, the kind of record (a decision, a review, a
//     TODO weigh a little more) and its recency.
//
// The lowest score goes first, the oldest first among equals.

// Weights of a unit's score.
const (
	wConstraint = 2.0
	wNeeded     = 2.0
	wNeededMore = 0.25 // each further word the work to come shares with it, up to wNeededMax
	wNeededMax  = 1.0
	wName       = 1.0
	wRecency    = 0.4 // times phase / the last phase
)

// kindWeight breaks ties by kind, a little: a decision or a review is
// said on purpose, an open TODO is work left; less than recency, so a
// routine decision of long ago goes before a routine note of late.
var kindWeight = map[unitKind]float64{uWhat: 0.2, uReview: 0.2, uTodo: 0.1}

// constraintWords are the words that state a constraint, matched whole
// and lower-cased; constraintPhrases the phrases, matched as text.
var (
	constraintWords = func() map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(`never must mustn't shall always forbidden prohibited mandatory required requires
			cannot can't don't exceed exceeds limit limits limited cap caps capped maximum minimum quota budget window
			deadline timeout timeouts port ports utc monday mondays tuesday tuesdays wednesday wednesdays thursday
			thursdays friday fridays saturday saturdays sunday sundays`) {
			m[w] = true
		}
		return m
	}()
	constraintPhrases = []string{"do not", "no more than", "no less than", "no later than", "at most", "at least", "up to", "not exceed", "rate limit", "rate-limit"}
)

// constraintNumber marks a quantity with a unit, a time of day or a
// host:port; it runs only on text with a digit.
var constraintNumber = regexp.MustCompile(`\b\d{1,2}:\d{2}\b|\b[A-Za-z][\w.-]*:\d{2,5}\b|\b\d+(?:\.\d+)?\s?(?i:ms|s|sec|secs|seconds?|minutes?|mins?|hours?|h|days?|weeks?|months?|years?|[kmgt]i?b|req/s|rps|qps)\b|\d%|\d %`)

// Constraint reports whether text states a constraint: "never", "must",
// a limit, a window, a port, a deadline, a quantity with a unit (500 ms,
// 30 days, 2 GiB, 80%), a time of day or a host:port.
func Constraint(text string) bool {
	lower := strings.ToLower(text)
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if constraintWords[w] {
			return true
		}
	}
	for _, p := range constraintPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return strings.ContainsAny(text, "0123456789") && constraintNumber.MatchString(text)
}

var (
	headerRe = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+$`)
	hostPort = regexp.MustCompile(`^[A-Za-z][\w.-]*:\d{2,5}$`)
)

// givesName reports whether text gives a name a later agent needs word
// for word: an identifier (snake_case, camelCase, pkg.Func, a call), a
// path, a host:port, a header such as X-Request-ID, or backticked text.
func givesName(text string) bool {
	if strings.Count(text, "`") >= 2 {
		return true
	}
	for _, f := range strings.Fields(text) {
		tok := strings.Trim(f, `,;:!?"'()[]{}`)
		tok = strings.TrimRight(tok, ".")
		switch {
		case len(tok) < 3 || !hasLetter(tok):
		case strings.HasSuffix(tok, "()"), hostPort.MatchString(tok), headerRe.MatchString(tok) && upperCount(tok) >= 2:
			return true
		case strings.Contains(tok, "_"), camelCase(tok), dottedName(tok):
			return true
		case strings.Contains(tok, "/") && len(tok) > 4:
			return true
		}
	}
	return false
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

func upperCount(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsUpper(r) {
			n++
		}
	}
	return n
}

// camelCase: a lower-case letter right before an upper-case one.
func camelCase(s string) bool {
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		if unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i]) {
			return true
		}
	}
	return false
}

// dottedName: two or more identifier parts (pkg.Func, config.yaml).
func dottedName(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !hasLetter(p) || strings.IndexFunc(p, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' }) >= 0 {
			return false
		}
	}
	return true
}

// terms returns the words of text that can tie a unit to the work to
// come: identifiers and values whole (orders_by_customer_v2, 8443),
// other words of four letters or more, not stop words, by their stem
// (alerting and alerts are one term).
func terms(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		lw := strings.ToLower(w)
		switch {
		case strings.ContainsAny(w, "_0123456789") || camelCase(w):
			if len(lw) >= 2 {
				out[lw] = true
			}
		case len(lw) >= 4 && !stopWords[lw]:
			out[stem(lw)] = true
		}
	}
	return out
}

// stemSuffixes are cut from a word's end, the first that fits, before
// it is cut to stemLen letters.
var stemSuffixes = []struct{ suffix, with string }{
	{"ations", "at"}, {"ation", "at"}, {"ments", ""}, {"ment", ""}, {"ings", ""}, {"ing", ""}, {"ions", ""}, {"ion", ""},
	{"ies", "y"}, {"ers", ""}, {"er", ""}, {"es", ""}, {"ed", ""}, {"s", ""}, {"e", ""},
}

const stemLen = 6

// stem is a crude stem of a lower-case word: alerting, alerts and
// alerted are "alert", rotation and rotated "rotat".
func stem(w string) string {
	for _, s := range stemSuffixes {
		if strings.HasSuffix(w, s.suffix) && len(w)-len(s.suffix) >= 3 {
			w = w[:len(w)-len(s.suffix)] + s.with
			break
		}
	}
	if r := []rune(w); len(r) > stemLen {
		w = string(r[:stemLen])
	}
	return w
}
