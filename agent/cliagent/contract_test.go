package cliagent

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/agenttest"
	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/npmpin/npmpintest"
)

// TestContract runs the driver contract suite against the real Claude Code
// CLI, offline, talking to a fake Anthropic server on 127.0.0.1 whose model
// does each task with one tool call (told apart by the prompt), then
// answers. It is skipped, with the reason, when Claude Code is not
// installed and npm is not there to install it (see npmpintest.ForTest).
// Claude Code is confined with Landlock; without it, the check that a write
// outside the repository is refused is skipped.
func TestContract(t *testing.T) {
	caps := agenttest.Caps{Usage: true,
		CommandGroups: "Claude Code starts each Bash command in a process group of its own; the driver records the session's",
	}
	if r, why := landlock.Available(); r == nil {
		caps.NotConfined = "the CLI driver confines the agent with Landlock, and " + why
	}
	agenttest.Run(t, caps, func(t *testing.T, env agenttest.Env) agent.Driver {
		bin := npmpintest.ForTest(t, claude.Pin)
		tool := func(name string, input map[string]string) fakeanthropic.Reply {
			return fakeanthropic.Reply{ToolUses: []fakeanthropic.ToolUse{{Name: name, Input: input}}, Usage: fakeanthropic.Usage{InputTokens: 20, OutputTokens: 5}}
		}
		srv := startFake(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
			task := func(k agenttest.Task) bool { return r.Contains(k.String() + ":") }
			if r.HasToolResult() {
				text := agenttest.Answer
				if task(agenttest.TaskSecret) {
					// The model repeats what the command printed.
					if r.Contains(agenttest.Secret) {
						text += "\nthe key is " + agenttest.Secret
					} else {
						text += "\nthe key is not set"
					}
				}
				return fakeanthropic.Reply{Text: text, Usage: fakeanthropic.Usage{InputTokens: 30, OutputTokens: 3}}
			}
			switch {
			case task(agenttest.TaskWriteInside):
				return tool("Write", map[string]string{"file_path": agenttest.InsideFile, "content": agenttest.InsideContent})
			case task(agenttest.TaskWriteOutside):
				return tool("Write", map[string]string{"file_path": filepath.Join(env.Outside, agenttest.OutsideFile), "content": agenttest.InsideContent})
			case task(agenttest.TaskHang):
				return tool("Bash", map[string]string{"command": agenttest.HangCommand})
			case task(agenttest.TaskSecret):
				return tool("Bash", map[string]string{"command": agenttest.SecretCommand})
			}
			return fakeanthropic.Reply{Text: agenttest.Answer, Usage: fakeanthropic.Usage{InputTokens: 10, OutputTokens: 2}}
		})
		vars := offline(srv)
		vars["HOME"], vars["LANG"] = t.TempDir(), "C.UTF-8"
		tmpl := claude.New().Template()
		tmpl.Command[0], tmpl.ResumeCommand[0] = bin, bin
		return newCLI(t, Options{
			Template: tmpl,
			Model:    "claude-sonnet-4-5",
			// The process's own environment, with the suite's secret in it.
			Env:       vars,
			Timeout:   2 * time.Minute,
			KillGrace: time.Second,
			Groups:    env.Groups,
		})
	})
}
