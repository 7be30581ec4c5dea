package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent"
)

// skipsPrompts names what argument arg of a CLI agent command running
// program turns off, or "" when it is not one of the flags that make the
// agent act without asking (each vendor names its own: see
// cliagent.SkipsPrompts).
func skipsPrompts(program, arg string) string { return cliagent.SkipsPrompts(program, arg) }

// Unattended returns one line for each CLI template a role of p uses
// whose command turns the agent's own permission prompts off (the
// built-in templates do, so that a session runs
// unattended), sorted by name and saying which roles use it. gaffer confines a CLI agent's
// writes only (Landlock, where the kernel has it): with such a flag the agent
// may read and run anything the user may.
func (p Profile) Unattended() []string {
	uses := map[string][]string{}
	for _, r := range []agent.Role{agent.RoleArchitect, agent.RoleDeveloper, agent.RoleReviewer, agent.RoleEvaluator} {
		if rs := p.Role(r); rs.Driver == DriverCLI {
			uses[rs.Agent] = append(uses[rs.Agent], string(r))
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(p.Agents)) {
		var flags []string
		cmd := p.Agents[name].Command
		for _, a := range cmd {
			if skipsPrompts(cmd[0], a) != "" {
				flags = append(flags, strings.SplitN(a, "=", 2)[0])
			}
		}
		if len(flags) == 0 {
			continue
		}
		if len(uses[name]) == 0 {
			continue
		}
		used := "the " + strings.Join(uses[name], ", ")
		out = append(out, fmt.Sprintf("agents.%s (%s) runs with %s: the agent edits files and runs commands without asking, and gaffer confines only what it writes (Landlock, where the kernel has it), not what it reads or its network",
			name, used, strings.Join(flags, " ")))
	}
	return out
}

// markDangerous puts a "DANGER" line comment on every argument of a CLI
// template's command or resume_command that skipsPrompts names.
func markDangerous(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if (k == "command" || k == "resume_command") && v.Kind == yaml.SequenceNode {
				for _, a := range v.Content {
					if why := skipsPrompts(v.Content[0].Value, a.Value); why != "" {
						a.LineComment = "# DANGER: " + why
					}
				}
			}
		}
	}
	for _, c := range n.Content {
		markDangerous(c)
	}
}
