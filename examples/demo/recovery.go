package demo

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// WriteRecovery tells, in two lines per phase, the recovery the run
// went through: the repeated failure, what came of the replan it reserved
// (a revision accepted within the phase's frozen goal, one refused, or
// none: the replanner failed or was cut off), and how the phase ended.
func WriteRecovery(out io.Writer, s state.ExecutionState) {
	for _, r := range nodes.ReplansByPhase(s) {
		n := len(r.Failures)
		if n == 0 {
			continue
		}
		last := r.Failures[n-1]
		how := fmt.Sprintf("%d times", n)
		if n == 2 {
			how = "twice"
		}
		if slices.IndexFunc(r.Failures, func(f recovery.Failure) bool { return f.Fingerprint != last.Fingerprint }) < 0 {
			how += " the same way"
		}
		fmt.Fprintf(out, "\nRecovery: phase %d failed %s (%s: %s);\n", r.Phase, how, last.Category, failureGist(last.Tail))
		end := "the run ended before the phase did"
		if ps, err := s.PhaseState(r.Phase - 1); err == nil && ps.Status == state.PhaseCompleted {
			end = fmt.Sprintf("attempt %d passed", ps.Attempt)
		}
		switch {
		case r.Accepted > 0:
			fmt.Fprintf(out, "  replanned: the revised approach kept the phase's frozen goal and was accepted, and %s.\n", end)
		case r.Revised > 0:
			fmt.Fprintf(out, "  replanned, but no revision was accepted; %s.\n", end)
		default:
			fmt.Fprintf(out, "  a replan was tried, but the replanner gave no revision; %s.\n", end)
		}
	}
}

// gistRe finds the line of a failure's text that says what went wrong:
// a compiler's or test's file:line message, a failing test, a panic.
var gistRe = regexp.MustCompile(`(?m)^\s*(?:\S+\.\w+:\d+(?::\d+)?: .*|--- FAIL: .*|panic: .*)$`)

// failureGist is the line of a failure's text that says what went wrong,
// or its last line.
func failureGist(text string) string {
	if m := gistRe.FindString(text); m != "" {
		return strings.TrimSpace(m)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return cutRunes(strings.TrimSpace(lines[len(lines)-1]), 120)
}

// cutRunes cuts s at n runes, marking the cut with "…".
func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n])) + "…"
	}
	return s
}
