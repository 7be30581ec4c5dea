package recovery

import (
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// A model's second opinion on a revision (issue 33). CheckRevision reads
// names, files, tests and sentences; it cannot tell that a revision which
// keeps every name now makes one do something else ("Sub returns the
// absolute difference"). Where the run has a reviewer model, the
// workflow asks it one question about a revision that passed
// CheckRevision but rewrites the goal's deliverables (RewritesTasks):
// does it still deliver the goal? The answer can only add a refusal —
// the mechanical checks stay the floor — its tokens are the run's, and
// the answer goes into the decision record.

// RewritesTasks reports whether revised says the anchor's tasks in other
// words: not the same tasks (ids, titles, types, files and bodies, white
// space and the order of files aside). A revision that keeps the tasks
// word for word and changes only its approach changes how the phase
// works, not what it delivers: no second opinion is asked.
func RewritesTasks(a Anchor, revised []state.Task) bool {
	if len(revised) != len(a.Tasks) {
		return true
	}
	for i, at := range a.Tasks {
		rt := revised[i]
		if rt.ID != at.ID || rt.Type != at.Type || normSpace(rt.Title) != normSpace(at.Title) ||
			normSpace(rt.Description) != normSpace(at.Body) || !sameFiles(rt.Files, at.Files) {
			return true
		}
	}
	return false
}

func sameFiles(a, b []string) bool {
	set := map[string]int{}
	for _, f := range a {
		set[cleanFile(f)]++
	}
	for _, f := range b {
		set[cleanFile(f)]--
	}
	for _, n := range set {
		if n != 0 {
			return false
		}
	}
	return true
}

// SecondOpinionPrompt asks the reviewer model whether revised (with its
// approach) still delivers the anchor's goal: one yes or no with its
// reason, as the JSON a review is ({"approved": …, "comments": …}), so
// every driver's answer is read as a review is.
func SecondOpinionPrompt(a Anchor, revised []state.Task, approach string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the reviewer of a coding workflow, asked one question about a revised plan of phase %d.\n\n", a.Phase+1)
	b.WriteString("The phase kept failing and the replanner revised how it is done. The revision passed the workflow's\n")
	b.WriteString("mechanical checks (it still names every function, file and test the goal names, and puts none off),\n")
	b.WriteString("but it rewrites the phase's tasks. Does it still deliver the goal below: the same behaviour, not a\n")
	b.WriteString("weaker, partial or different one? A different way to the same result is fine.\n\n")
	b.WriteString("## The goal, as the human approved it\n\n<goal-anchor>\n")
	b.WriteString(a.Text())
	b.WriteString("</goal-anchor>\n\n## The revision\n\n<revision>\n")
	fmt.Fprintf(&b, "Approach: %s\n\n", strings.TrimSpace(approach))
	for i, t := range revised {
		if i > 0 {
			b.WriteString("\n")
		}
		writeTaskHead(&b, t.ID, t.Title, t.Type, t.Files)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString("\n" + d + "\n")
		}
	}
	b.WriteString("</revision>\n\n")
	b.WriteString(`Answer with one JSON object and nothing else:
{"approved": true if the revision still delivers the goal, false if it does not,
 "comments": "<why, in a sentence or two>"}
`)
	return b.String()
}
