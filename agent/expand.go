package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	if phase < 1 {
		return "", errors.New("expand_context: phase counts from 1")
	}
	dir, err := tb.Resolve(storyDir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
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
		return fmt.Sprintf("phase %d has no decision records%s\n", phase, note), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Decision records of phase %d%s:\n", phase, note)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", fmt.Errorf("expand_context: %w", err)
		}
		fmt.Fprintf(&b, "\n%s/%s:\n%s", storyDir, n, data)
	}
	return b.String(), nil
}
