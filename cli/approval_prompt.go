package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gaffer-dev/gaffer/nodes"
)

// approvalAnswer reads one answer to the terminal's approval prompt
// ("[a]pprove, [r]eject, [f]eedback"): line is what was typed, read reads
// the next line. Only the offered answers count, as their letter or full
// word; anything else says so and done is false (ask again). A plain
// reject ends the run for good, so it asks for confirmation first (no, or
// no answer, asks the prompt again); feedback asks for the notes (none
// asks the prompt again). An answer given meanwhile in another terminal
// (read returns it instead of a line) wins.
func approvalAnswer(ctx context.Context, out io.Writer, read func(context.Context) (string, *nodes.Answer, bool), line string) (ans nodes.Answer, done bool) {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "a", "approve":
		return nodes.Answer{Approved: true}, true
	case "r", "reject":
		fmt.Fprint(out, "Reject the plan for good (the run ends rejected)? [y/N]: ")
		l, remote, ok := read(ctx)
		if remote != nil {
			return *remote, true
		}
		if ok {
			switch strings.ToLower(strings.TrimSpace(l)) {
			case "y", "yes":
				return nodes.Answer{}, true
			}
		}
		return nodes.Answer{}, false
	case "f", "feedback":
		fmt.Fprint(out, "Feedback for the architect: ")
		fb, remote, ok := read(ctx)
		if remote != nil {
			return *remote, true
		}
		if ok && strings.TrimSpace(fb) != "" {
			return nodes.Answer{Feedback: strings.TrimSpace(fb)}, true
		}
		return nodes.Answer{}, false
	}
	fmt.Fprintf(out, "Please answer a (approve), r (reject) or f (feedback), not %q.\n", strings.TrimSpace(line))
	return nodes.Answer{}, false
}
