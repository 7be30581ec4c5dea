package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
)

func resumeCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "resume",
		Flags:        localGlobals(paceFlag()),
		Usage:        "continue a killed or interrupted run from its last checkpoint (no flags needed)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		// Resume continues a run (the newest unfinished one without RUN)
		// with the drivers rebuilt from its stored config. A run waiting
		// for approval is asked on a terminal, or left waiting with the
		// commands printed; a run waiting for recovery's question is left
		// waiting with the question and its `approve --decision` commands
		// printed. With `gaffer serve` holding the store, it queues the run
		// there.
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			return withService(c, io, false, func(svc host.Service, cmd func(...string) string) error {
				out, err := svc.Resume(c.Context, host.RunRequest{RunID: a.run})
				return report(io, cmd, out, err)
			})
		},
	}
}
