package llm

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/agenttest"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

// TestContract runs the driver contract suite against internal/fakellm,
// spoken to by the real langchaingo OpenAI client: the fake model does
// each task with one tool call (told apart by the prompt), then answers.
func TestContract(t *testing.T) {
	agenttest.Run(t, agenttest.Caps{Usage: true}, func(t *testing.T, env agenttest.Env) agent.Driver {
		tool := func(name string, args map[string]string) fakellm.Turn {
			b, _ := json.Marshal(args)
			return fakellm.Turn{Calls: []fakellm.Call{{Name: name, Args: string(b)}}, Input: 20, Output: 5}
		}
		srv := fakellm.NewOpenAIFunc(func(r fakellm.Request) fakellm.Turn {
			task := func(k agenttest.Task) bool { return strings.HasPrefix(r.FirstUser, k.String()+":") }
			if r.SinceUser > 0 {
				said := ""
				if n := len(r.ToolResults); task(agenttest.TaskSecret) && n > 0 {
					said = "\n" + r.ToolResults[n-1]
				}
				return fakellm.Turn{Text: agenttest.Answer + said, Input: 30, Output: 3}
			}
			switch {
			case task(agenttest.TaskWriteInside):
				return tool("write_file", map[string]string{"path": agenttest.InsideFile, "content": agenttest.InsideContent})
			case task(agenttest.TaskWriteOutside):
				return tool("write_file", map[string]string{"path": filepath.Join(env.Outside, agenttest.OutsideFile), "content": agenttest.InsideContent})
			case task(agenttest.TaskHang):
				return tool("run_command", map[string]string{"command": agenttest.HangCommand})
			case task(agenttest.TaskSecret):
				return tool("run_command", map[string]string{"command": agenttest.SecretCommand})
			}
			return fakellm.Turn{Text: agenttest.Answer, Input: 10, Output: 2}
		})
		t.Cleanup(srv.Close)
		t.Setenv(testKeyEnv, testKey)
		d, err := NewDriver(Config{Provider: ProviderOpenAI, Model: "test-model", BaseURL: srv.BaseURL(), APIKeyEnv: testKeyEnv,
			HTTPClient: srv.Client(), Toolbox: agent.ToolboxOptions{Groups: env.Groups}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
