package profile

import (
	"context"
	"fmt"
	"os"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// maxCommandOutput is how much of a Doctor's command's output is kept.
const maxCommandOutput = 16 << 10

// Commands runs the Doctor's execute_fix commands (nodes.CommandRunner)
// as an agent's run_command runs: an agent.Toolbox on the run's tree,
// confined where the kernel allows, its process group recorded in
// env.Groups, from the environment of the run's agents (without the keys
// its profile names, nor any variable named like a secret). Its output
// is cut to a bound and redacted as the transcripts are.
func (s *Setup) Commands(env host.DriverEnv) nodes.CommandRunner {
	return commandRunner(agentOptions{groups: env.Groups, keys: s.Keys, getenv: s.getenv, warn: env.Warn})
}

func commandRunner(opts agentOptions) nodes.CommandRunner {
	return func(ctx context.Context, cfg state.RunConfig, dir, command string) (agent.CommandResult, error) {
		if err := opts.keys.take(keyNames(cfg)); err != nil {
			return agent.CommandResult{}, err
		}
		tb, err := agent.NewToolbox(dir, agent.ToolboxOptions{Env: agentEnviron(cfg, nil, opts.env),
			MaxOutput: maxCommandOutput, Groups: opts.groups, Warn: opts.warn})
		if err != nil {
			return agent.CommandResult{}, fmt.Errorf("doctor's command: %w", err)
		}
		defer tb.Close()
		res, err := tb.Run(ctx, command, nil)
		redact := secretRedactor(keyNames(cfg), opts.env, os.Environ())
		res.Output = redact(res.Output)
		if err != nil {
			return res, redactError(err, redact)
		}
		return res, nil
	}
}
