package runview

import (
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/nodes"
)

// EventLine is the line a run's progress prints for the payload of one
// of its custom events (a review's verdict, a phase's attempt, a status
// change, a recovery decision, undeclared or untouched files), indented
// under the node that sent it; ok is false for a payload it does not
// show. runID names the run in a status change.
func EventLine(runID string, payload any) (line string, ok bool) {
	switch v := payload.(type) {
	case events.Review:
		verdict := "approved"
		if !v.Approved {
			verdict = "rejected"
		}
		return fmt.Sprintf("  review of phase %d (iteration %d): %s", v.Phase, v.Iteration, verdict), true
	case events.PhaseFinished:
		return fmt.Sprintf("  phase %d attempt %d: %s", v.Phase, v.Attempt, v.Outcome), true
	case events.RunStatus:
		return fmt.Sprintf("  run %s: %s → %s", runID, v.From, v.To), true
	case events.RecoveryDecision:
		lane := ""
		if v.Lane != "" {
			lane = " lane " + v.Lane
		}
		return fmt.Sprintf("  recovery, phase %d%s: %s — %s", v.Phase, lane, v.Decision, firstLineOf(v.Why)), true
	case events.DeclaredFiles:
		lane := ""
		if v.Lane > 0 {
			lane = fmt.Sprintf(" lane %d", v.Lane)
		}
		files := nodes.FilesCheck{Undeclared: v.Undeclared, Untouched: v.Untouched}.String()
		return fmt.Sprintf("  phase %d%s attempt %d: %s", v.Phase, lane, v.Attempt, firstLineOf(files)), true
	}
	return "", false
}

// firstLineOf is the first line of s, cut at 200 runes.
func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + " …"
	}
	return s
}
