package cli

import (
	"errors"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/agent/script"
)

// helpTopics are the pages `gaffer help TOPIC` prints besides the
// commands' help: documents an installed binary's user has no source
// tree to read.
func helpTopics() map[string]string {
	return map[string]string{"script-format": script.Format}
}

// helpCommand is `gaffer help [COMMAND | TOPIC]`: urfave/cli's help for
// the application or a command, or a topic's page (paged on a terminal).
func (a *app) helpCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, a command's help, or a topic: script-format (the script driver's file)",
		ArgsUsage: "[COMMAND | script-format]",
		Action: func(c *ucli.Context) error {
			parent := c
			if l := c.Lineage(); len(l) > 1 {
				parent = l[1]
			}
			name := c.Args().First()
			if page, ok := helpTopics()[name]; ok {
				return a.io.page(page)
			}
			if name == "" {
				return ucli.ShowAppHelp(parent)
			}
			if parent.App.Command(name) == nil {
				return usageErrorf("no command or help topic %q (topics: script-format)", name)
			}
			return ucli.ShowCommandHelp(parent, name)
		},
	}
}

// commandUsageError is a usage error of a command: Report points to that
// command's --help rather than the application's.
type commandUsageError struct {
	command string // "run", "plan validate"
	err     error
}

func (e *commandUsageError) Error() string { return e.err.Error() }

// Unwrap returns the usage error.
func (e *commandUsageError) Unwrap() error { return e.err }

// helpFor is the command whose --help a usage error err points to: the
// one it came from, "" for the application's.
func helpFor(err error) string {
	var ce *commandUsageError
	if errors.As(err, &ce) {
		return ce.command
	}
	return ""
}

// withUsageHelp makes every usage error of cmds (and their subcommands),
// from their flags or their actions, name the command it came from, so
// that Report says "Run 'gaffer run --help'" after a bad `gaffer run`.
func withUsageHelp(cmds []*ucli.Command, prefix string) []*ucli.Command {
	for _, cmd := range cmds {
		name := strings.TrimSpace(prefix + " " + cmd.Name)
		if cmd.Name == "help" || cmd.Hidden {
			continue
		}
		if act := cmd.Action; act != nil {
			cmd.Action = func(c *ucli.Context) error { return inCommand(name, act(c)) }
		}
		if on := cmd.OnUsageError; on != nil {
			cmd.OnUsageError = func(c *ucli.Context, err error, sub bool) error { return inCommand(name, on(c, err, sub)) }
		}
		withUsageHelp(cmd.Subcommands, name)
	}
	return cmds
}

// inCommand is err naming command when it is a usage error; err
// otherwise.
func inCommand(command string, err error) error {
	if err == nil || ExitCode(err) != ExitUsage || helpFor(err) != "" {
		return err
	}
	return &commandUsageError{command: command, err: err}
}
