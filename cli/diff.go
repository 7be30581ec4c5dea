package cli

import (
	"context"
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
)

func diffCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "diff",
		Usage:        "show what a run committed, or one phase's change with --phase N (the newest run without RUN)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags: localGlobals(
			&ucli.Uint64Flag{Name: "phase", EnvVars: []string{"GAFFER_PHASE"}, Usage: "the phase (1-based); without it, every phase committed so far"},
			&ucli.BoolFlag{Name: "exec-dir", EnvVars: []string{"GAFFER_EXEC_DIR"}, Usage: "include the execution directory (plan, summaries, records)"},
		),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "exec-dir")
			if err != nil {
				return err
			}
			n, err := a.Uint64("phase")
			if err != nil {
				return err
			}
			return withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				return Diff(c.Context, io.Out, svc, host.DiffRequest{RunID: a.run, Phase: int(n), ExecDir: a.Bool("exec-dir"), Repo: g.Repo})
			})
		},
	}
}

// Diff writes the change svc says run req.RunID committed (host.GitOps.Diff):
// its header line, then the unified diff. A phase out of range is a
// usage error (exit 2); the other refusals say why, exit 8.
func Diff(ctx context.Context, w io.Writer, svc host.Service, req host.DiffRequest) error {
	d, err := svc.Diff(ctx, req)
	fmt.Fprint(w, d.Header)
	if err != nil {
		if host.CodeOf(err) == host.Usage {
			return exitf(ExitUsage, "%w", err)
		}
		return err
	}
	_, err = w.Write(d.Patch)
	return err
}
