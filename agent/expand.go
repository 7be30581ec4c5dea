package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/story"
)

// ExpandContext reads the Task Story's decision records of phase (1-based)
// from storyDir (relative to the session's directory, resolved through tb)
// and renders them in sequence order under a header naming the phase; note
// (such as " (call 1 of 2 for it)") follows the phase in the header. It is
// the expand_context tool of the llm and script drivers, written once.
func ExpandContext(tb *Toolbox, storyDir string, phase int, note string) (string, error) {
	if storyDir == "" {
		return "", errors.New("expand_context: this session has no Task Story")
	}
	dir, err := tb.Resolve(storyDir)
	if err != nil {
		return "", err
	}
	return PhaseRecords(dir, storyDir, phase, note)
}

// PhaseRecords renders the decision records of phase (1-based) in dir, the
// story directory on disk, as ExpandContext does; label names the
// directory in the text (the session's relative story/ path). A phase
// without records is one line saying so. It is the text of expand_context
// and of gaffer story show, so what a CLI agent reads is what the llm
// driver's tool returns.
func PhaseRecords(dir, label string, phase int, note string) (string, error) {
	if phase < 1 {
		return "", errors.New("expand_context: phase counts from 1")
	}
	names, err := RecordFiles(dir, phase)
	if err != nil {
		return "", err
	}
	return RenderRecords(label, phase, note, names, func(n string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, n)) })
}

// RenderRecords is PhaseRecords' text from the record files names (of
// phase, sorted) and read, which returns one file's content: the story
// directory on disk, or a commit's (gaffer story show).
func RenderRecords(label string, phase int, note string, names []string, read func(name string) ([]byte, error)) (string, error) {
	if len(names) == 0 {
		return fmt.Sprintf("phase %d has no decision records%s\n", phase, note), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Decision records of phase %d%s:\n", phase, note)
	for _, n := range names {
		data, err := read(n)
		if err != nil {
			return "", fmt.Errorf("expand_context: %w", err)
		}
		fmt.Fprintf(&b, "\n%s/%s:\n%s", label, n, data)
	}
	return b.String(), nil
}

// RecordFiles lists the names of phase's record files in dir
// (NNN-ROLE-pP-aA.json), sorted; none when dir does not exist.
func RecordFiles(dir string, phase int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("expand_context: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && IsPhaseRecord(e.Name(), phase) { // a planted link is no record
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// IsPhaseRecord reports whether name (a file name, no directory) is a
// decision record of phase: a .json file whose name carries -pP-a.
func IsPhaseRecord(name string, phase int) bool {
	return strings.HasSuffix(name, ".json") && strings.Contains(name, fmt.Sprintf("-p%d-a", phase))
}

// ExpansionCost is what expanding one earlier phase would add to a
// session's context: the phase and the tokens of the text PhaseRecords
// returns for it, estimated offline at four bytes a token (story.Tokens).
type ExpansionCost struct {
	Phase, Tokens int
}

// ExpansionCosts estimates, for each phase before phase (1-based), the
// tokens its records in dir would add if expanded (seed 004: the cost is
// shown before the expansion is made). Phases without records are left
// out.
func ExpansionCosts(dir, label string, phase int) ([]ExpansionCost, error) {
	var out []ExpansionCost
	for p := 1; p < phase; p++ {
		names, err := RecordFiles(dir, p)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			continue
		}
		text, err := PhaseRecords(dir, label, p, "")
		if err != nil {
			return nil, err
		}
		out = append(out, ExpansionCost{Phase: p, Tokens: story.Tokens(text)})
	}
	return out, nil
}

// CostLine renders costs as one sentence for a prompt or a tool's
// description: "Expanding adds about 1200 tokens for phase 1, 300 for
// phase 2 (estimated at 4 bytes a token)." "" for none.
func CostLine(costs []ExpansionCost) string {
	if len(costs) == 0 {
		return ""
	}
	parts := make([]string, len(costs))
	for i, c := range costs {
		if i == 0 {
			parts[i] = fmt.Sprintf("about %d tokens for phase %d", c.Tokens, c.Phase)
		} else {
			parts[i] = fmt.Sprintf("%d for phase %d", c.Tokens, c.Phase)
		}
	}
	return "Expanding adds " + strings.Join(parts, ", ") + " (estimated at 4 bytes a token)."
}

// RecordPhase returns the phase of a decision record's file name
// (NNN-ROLE-pP-aA.json), and false for a name that is no record's.
func RecordPhase(name string) (int, bool) {
	if !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	i := strings.LastIndex(name, "-p")
	if i < 0 {
		return 0, false
	}
	var p, a int
	if _, err := fmt.Sscanf(name[i:], "-p%d-a%d.json", &p, &a); err != nil || p < 1 {
		return 0, false
	}
	return p, true
}
