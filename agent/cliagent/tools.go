package cliagent

import (
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
)

// claudeTools maps the session tools to the Claude Code 2.1 tools that do
// the same work. Deleting has no tool of its own (Bash does it).
var claudeTools = []struct {
	tool   string
	claude []string
}{
	{agent.ToolRead, []string{"Read"}},
	{agent.ToolWrite, []string{"Write", "NotebookEdit"}},
	{agent.ToolEdit, []string{"Edit", "NotebookEdit"}},
	{agent.ToolList, []string{"Glob"}},
	{agent.ToolGrep, []string{"Grep"}},
	{agent.ToolRun, []string{"Bash"}},
}

// claudeDisallowed returns the Claude Code tools to deny a session (its
// --disallowedTools), comma separated: those of the session tools s does
// not allow (see Session.Allows); "" when it allows them all.
func claudeDisallowed(s agent.Session) string {
	var off []string
	for _, m := range claudeTools {
		if s.Allows(m.tool) {
			continue
		}
		for _, c := range m.claude {
			if !slices.Contains(off, c) {
				off = append(off, c)
			}
		}
	}
	return strings.Join(off, ",")
}
