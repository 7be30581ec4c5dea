// (package documentation in doc.go)
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// IO is where a command reads and writes. Commands never touch os.Stdout.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Terminal reports whether In and Out are an interactive terminal:
	// then run asks for approval and draws the phase tree. Nil: detect
	// from In and Out being character devices.
	Terminal func() bool
}

func (o IO) terminal() bool {
	if o.Terminal != nil {
		return o.Terminal()
	}
	return isCharDevice(o.In) && isCharDevice(o.Out)
}

func isCharDevice(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// NewApp returns the gaffer command-line application.
func NewApp(version string, io IO) *ucli.App {
	app := &ucli.App{
		Name:    "gaffer",
		Usage:   "durable coding-agent workflows: plan, approve, run phase by phase, commit, resume",
		Version: version,
		Reader:  io.In, Writer: io.Out, ErrWriter: io.Err,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "repo", Value: ".", EnvVars: []string{"GAFFER_REPO"}, Usage: "the git repository the run works on"},
			&ucli.StringFlag{Name: "store", EnvVars: []string{"GAFFER_STORE"}, Usage: "the run store directory (default: .git/gaffer of --repo)"},
			&ucli.StringFlag{Name: "profile", EnvVars: []string{"GAFFER_PROFILE"}, Usage: "the profile (drivers, models, limits)"},
			&ucli.StringFlag{Name: "log-level", Value: "warn", EnvVars: []string{"GAFFER_LOG_LEVEL"}, Usage: "debug, info, warn or error"},
		},
		ExitErrHandler: func(*ucli.Context, error) {}, // Main maps errors to codes
		Commands: []*ucli.Command{
			runCommand(io), approveCommand(io), rejectCommand(io), resumeCommand(io),
			statusCommand(io), listCommand(io), historyCommand(io), forkCommand(io),
			cancelCommand(io), demoCommand(io),
		},
	}
	return app
}

// Main runs the application with args (os.Args) and returns the exit code;
// errors are printed to io.Err as one line.
func Main(ctx context.Context, version string, args []string, io IO) int {
	err := NewApp(version, io).RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	var ee *ExitError
	if !errors.As(err, &ee) && isUsage(err) {
		code = ExitUsage
	}
	fmt.Fprintf(io.Err, "gaffer: %s\n", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "\n  "))
	return code
}

// isUsage recognises urfave/cli's flag errors.
func isUsage(err error) bool {
	s := err.Error()
	return strings.Contains(s, "flag provided but not defined") || strings.Contains(s, "Required flag") ||
		strings.Contains(s, "invalid value") || strings.Contains(s, "No help topic")
}

// logger builds the logger of --log-level, writing to io.Err.
func logger(c *ucli.Context, w io.Writer) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		lvl = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}
