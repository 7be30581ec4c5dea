package cli

import (
	"io"

	ucli "github.com/urfave/cli/v2"
)

// app holds what every command needs: where output goes and the version.
// A command is a method returning its *ucli.Command; its Action reads the
// flags into the command's options and calls their Run with a.stdout.
type app struct {
	version string
	stdout  io.Writer
	stderr  io.Writer
	io      IO // stdin and terminal detection for the workflow commands
}

// New returns the gaffer command-line application. Commands write their
// output to stdout and their diagnostics to stderr; errors are returned
// from RunContext, never turned into an exit here: main passes them to
// Report and ExitCode.
func New(version string, stdout, stderr io.Writer) *ucli.App {
	return NewWithIO(version, IO{Out: stdout, Err: stderr})
}

// NewWithIO is New with a standard input: run, approve and resume ask for
// approval on it when it and the output are a terminal.
func NewWithIO(version string, io IO) *ucli.App {
	io.version = version
	io = io.quietOnClosedPipe().live().serialized()
	a := &app{version: version, stdout: io.Out, stderr: io.Err, io: io}
	return &ucli.App{
		Name:                 "gaffer",
		UsageText:            "gaffer [global options] command [command options] [arguments...]",
		Usage:                "plan, run and review coding-agent work in phases, durably",
		Version:              version,
		Writer:               io.Out,
		ErrWriter:            io.Err,
		Flags:                append(globalFlags(), ucli.HelpFlag), // the app adds it only when help is its own command
		Commands:             a.commands(),
		EnableBashCompletion: true,
		Suggest:              true,
		Before: func(c *ucli.Context) error {
			_, err := GlobalsFrom(c)
			return err
		},
		Action:         groupAction,
		OnUsageError:   onUsageError,
		ExitErrHandler: func(*ucli.Context, error) {}, // main decides the exit code
	}
}

// commands lists gaffer's commands, in the order help shows them. Add a
// command here, with its constructor in a file of its own.
func (a *app) commands() []*ucli.Command {
	cmds := a.withOps([]*ucli.Command{
		runCommand(a.io), approveCommand(a.io), rejectCommand(a.io), resumeCommand(a.io),
		statusCommand(a.io), listCommand(a.io), historyCommand(a.io), forkCommand(a.io), diffCommand(a.io), logsCommand(a.io),
		cancelCommand(a.io), mergeCommand(a.io), deleteCommand(a.io), pruneCommand(a.io), demoCommand(a.io), graphCommand(a.io),
		a.planCommand(), a.storyCommand(), configCommand(a.io), mcpCommand(a.io), a.completionCommand(), a.completeCommand(),
	})
	return withUsageHelp(withTrailingGlobals(append(cmds, a.helpCommand())), "")
}

// groupAction is the action of the application and of command groups
// (such as "plan"): help when called alone, a usage error for an unknown
// subcommand.
func groupAction(c *ucli.Context) error {
	if c.Args().Present() {
		name := c.Args().First()
		if !isRoot(c) {
			name = c.Command.Name + " " + name
		}
		return usageErrorf("unknown command %q", name)
	}
	if !isRoot(c) {
		return ucli.ShowSubcommandHelp(c)
	}
	return ucli.ShowAppHelp(c)
}

// onUsageError turns urfave/cli's flag parsing errors into usage errors.
func onUsageError(_ *ucli.Context, err error, _ bool) error {
	return usageErrorf("%v", err)
}

// isRoot reports whether c is the application's own context rather than a
// command's.
func isRoot(c *ucli.Context) bool {
	return c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
}
