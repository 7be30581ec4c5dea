package script

import (
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/agenttest"
	"github.com/gaffer-dev/gaffer/state"
)

// TestContract runs the driver contract suite with a script that plays
// its tasks, one developer entry per task's phase.
func TestContract(t *testing.T) {
	usage := state.Usage{InputTokens: 10, OutputTokens: 2}
	step := func(k agenttest.Task, actions ...Action) DeveloperStep {
		return DeveloperStep{Match: Match{Phase: int(k)}, Actions: actions, Summary: agenttest.Answer, Usage: usage}
	}
	agenttest.Run(t, agenttest.Caps{Usage: true}, func(t *testing.T, env agenttest.Env) agent.Driver {
		s := &Script{Developer: []DeveloperStep{
			step(agenttest.TaskAnswer),
			step(agenttest.TaskWriteInside, Action{Write: &WriteAction{Path: agenttest.InsideFile, Content: agenttest.InsideContent}}),
			step(agenttest.TaskWriteOutside, Action{Write: &WriteAction{Path: filepath.Join(env.Outside, agenttest.OutsideFile), Content: agenttest.InsideContent}}),
			step(agenttest.TaskHang, Action{Run: agenttest.HangCommand}),
			step(agenttest.TaskSecret, Action{Run: agenttest.SecretCommand}),
		}}
		return NewDriver(s, Options{Groups: env.Groups})
	})
}
