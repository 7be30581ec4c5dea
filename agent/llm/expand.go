package llm

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
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
	dir, err := l.tb.Resolve(l.s.StoryDir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("expand_context: %w", err)
	}
	tag := fmt.Sprintf("-p%d-a", phase)
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && strings.Contains(e.Name(), tag) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return fmt.Sprintf("phase %d has no decision records (call %d of %d for it)", phase, l.expansions[phase], maxExpansions), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Decision records of phase %d (call %d of %d for it):\n", phase, l.expansions[phase], maxExpansions)
	for _, n := range names {
		data, err := os.ReadFile(dir + string(os.PathSeparator) + n)
		if err != nil {
			return "", fmt.Errorf("expand_context: %w", err)
		}
		fmt.Fprintf(&b, "\n%s/%s:\n%s", l.s.StoryDir, n, data)
	}
	return b.String(), nil
}
