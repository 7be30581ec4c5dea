package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
)

func cancelCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "cancel",
		Flags:        localGlobals(),
		Usage:        "cancel an unfinished run (the newest without RUN); it cannot be resumed afterwards",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			return withService(c, io, false, func(svc host.Service, _ func(...string) string) error {
				out, err := svc.Cancel(c.Context, host.RunRequest{RunID: a.run})
				if err != nil {
					return err
				}
				fmt.Fprintln(io.Out, out.Message)
				for _, n := range out.Notes {
					fmt.Fprintln(io.Out, n)
				}
				return nil
			})
		},
	}
}
