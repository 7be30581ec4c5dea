package llm

import (
	"errors"
	"fmt"
	"path/filepath"

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
	if err := l.spendExpansion("expand_context", phase); err != nil {
		return "", err
	}
	return agent.ExpandContext(l.tb, l.s.StoryDir, phase, fmt.Sprintf(" (call %d of %d for it)", l.expansions[phase], maxExpansions))
}

// spendExpansion counts one expansion of phase, or refuses it when the
// session's maxExpansions for the phase are used up. The refusal offers
// no other way to the records: the cap is a cap (seed 004).
func (l *loop) spendExpansion(op string, phase int) error {
	if l.expansions == nil {
		l.expansions = expansions{}
	}
	if l.expansions[phase] >= maxExpansions {
		return fmt.Errorf("%s: the %d expansions of phase %d's decision records this session may make are used up; go on with the story in your prompt and what the repository shows",
			op, maxExpansions, phase)
	}
	l.expansions[phase]++
	return nil
}

// storyRecordPhase returns the phase of the decision record path names
// (a file directly in the session's story directory), and false for any
// other path. read_file of a record counts as an expansion of its phase,
// so the cap cannot be walked around through read_file.
func (l *loop) storyRecordPhase(path string) (int, bool) {
	if l.s.StoryDir == "" {
		return 0, false
	}
	dir, err := l.tb.Resolve(l.s.StoryDir)
	if err != nil {
		return 0, false
	}
	full, err := l.tb.Resolve(path)
	if err != nil || filepath.Dir(full) != dir {
		return 0, false
	}
	return agent.RecordPhase(filepath.Base(full))
}

// expansionCosts is the sentence naming what expanding each earlier phase
// would add, for the tool's description; "" when nothing can be expanded
// (no story, phase 1, or a story directory that cannot be read).
func (l *loop) expansionCosts() string {
	if l.s.StoryDir == "" || l.s.Phase < 2 {
		return ""
	}
	dir, err := l.tb.Resolve(l.s.StoryDir)
	if err != nil {
		return ""
	}
	costs, err := agent.ExpansionCosts(dir, l.s.StoryDir, l.s.Phase)
	if err != nil {
		return ""
	}
	return agent.CostLine(costs)
}
