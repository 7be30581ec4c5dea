package llm

import (
	"errors"
	"fmt"

	"github.com/gaffer-dev/gaffer/agent"
)

// toolExpandContext is the llm driver's escape hatch (seed 004): it reads
// an earlier phase's full decision records when the compressed story in
// the prompt lacks a detail.
const toolExpandContext = "expand_context"

// maxExpansions is how many expand_context calls a session may make for
// one phase.
const maxExpansions = 2

// expansions counts expand_context calls by phase.
type expansions map[int]int

func (e expansions) total() int {
	n := 0
	for _, v := range e {
		n += v
	}
	return n
}

// expandContext returns the records of phase, concatenated in sequence
// order, counting the call; the third call for one phase is refused. Each
// call is logged in the session's message stream (the tool call and its
// result) and counted in Report.Expansions.
func (l *loop) expandContext(phase int) (string, error) {
	if phase < 1 {
		return "", errors.New("expand_context: phase counts from 1")
	}
	if l.expansions == nil {
		l.expansions = expansions{}
	}
	if l.expansions[phase] >= maxExpansions {
		return "", fmt.Errorf("expand_context: the %d calls for phase %d this session may make are used up; read %s/ with read_file instead",
			maxExpansions, phase, l.s.StoryDir)
	}
	l.expansions[phase]++
	return agent.ExpandContext(l.tb, l.s.StoryDir, phase, fmt.Sprintf(" (call %d of %d for it)", l.expansions[phase], maxExpansions))
}
