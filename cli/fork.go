package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
)

// ForkBranchPrefix names a fork's branch: gaffer/<run-id>.
const ForkBranchPrefix = host.ForkBranchPrefix

func forkCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "fork",
		Usage:        "start a new run from a past checkpoint of RUN (see history)",
		OnUsageError: onUsageError,
		ArgsUsage:    "RUN",
		Flags: localGlobals(&ucli.Uint64Flag{Name: "from", EnvVars: []string{"GAFFER_FROM"}, Usage: "the checkpoint's seq (required)"},
			&ucli.StringFlag{Name: remoteFlag, EnvVars: []string{"GAFFER_REMOTE"},
				Usage: "with --store postgres://…: the shared remote of the serves (their --remote) when RUN worked there; the fork's branch is pushed to it, and any serve resumes the fork"}),
		// The fork is a new run on its own branch, gaffer/<new-id>, checked
		// out at the commit the checkpoint stood on (host.Host.Fork); it is
		// not started: resume (or approve) continues it. On a database store
		// whose serves share a remote (--remote), the branch is pushed
		// there, with the execution directory copied from RUN committed on
		// it (host.Host.Fork, host/remote.go).
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			if v, ok := a.extra[remoteFlag]; ok {
				if err := c.Set(remoteFlag, v); err != nil {
					return exitf(ExitUsage, "--%s: %w", remoteFlag, err)
				}
			}
			from, err := a.Uint64("from")
			if err != nil {
				return err
			}
			if a.run == "" || from == 0 {
				return exitf(ExitUsage, "usage: gaffer fork RUN --from SEQ")
			}
			return withService(c, io, false, func(svc host.Service, cmd func(...string) string) error {
				f, err := svc.Fork(c.Context, host.ForkRequest{RunID: a.run, Seq: from})
				if err != nil {
					return err
				}
				fmt.Fprintf(io.Out, "%s\nContinue it with: %s\n", f, cmd("resume", f.RunID))
				return nil
			})
		},
	}
}
