package cli

import (
	"errors"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/profile/config"
)

// configCommand is "gaffer config": show the effective profile.
func configCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "config",
		Usage:        "show the configuration (gaffer.yaml, or the user's config.yaml)",
		OnUsageError: onUsageError,
		Action:       groupAction,
		Subcommands: []*ucli.Command{{
			Name:         "show",
			Usage:        "print the effective profile, secrets masked",
			OnUsageError: onUsageError,
			Flags: localGlobals(
				&ucli.StringFlag{Name: "profile", Usage: "the profile to show (as the global --profile; default: the file's default)"},
			),
			Action: func(c *ucli.Context) error {
				if c.Args().Present() {
					return usageErrorf("config show takes no arguments")
				}
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				name := g.Profile
				if c.IsSet("profile") {
					name = c.String("profile")
				}
				return ConfigShow(io, g.Repo, name, io.getenv)
			},
		}},
	}
}

// ConfigShow writes the effective profile name (the configuration's
// default for "") of the configuration found for the repository in
// repoDir, with secrets masked, after a comment naming the file, one
// saying that agents get no PID namespace of their own when the kernel
// refuses one (agent.PIDNamespaceNote), and one giving its
// max_runs_per_repo when it has one. A file that does not load is ExitInvalid,
// with its line; an unknown profile is a usage error.
func ConfigShow(io IO, repoDir, name string, getenv func(string) string) error {
	cfg, err := config.Load(repoDir, getenv)
	if err != nil {
		return exitf(ExitInvalid, "%w", err)
	}
	p, err := cfg.Effective(name)
	if errors.Is(err, config.ErrUnknownProfile) {
		return usageErrorf("--profile: %v", err)
	}
	if err != nil {
		return exitf(ExitInvalid, "%w", err)
	}
	from := cfg.Path()
	if from == "" {
		from = "none found; the built-in profile"
	}
	if _, err := io.Out.Write([]byte("# configuration: " + from + "\n")); err != nil {
		return err
	}
	if note := agent.PIDNamespaceNote(); note != "" {
		if _, err := io.Out.Write([]byte("# " + note + "\n")); err != nil {
			return err
		}
	}
	if n := cfg.MaxRunsPerRepo(); n > 0 {
		if _, err := fmt.Fprintf(io.Out, "# max_runs_per_repo: %d (gaffer serve: runs of this repository at once at most)\n", n); err != nil {
			return err
		}
	}
	return config.WriteShow(io.Out, p)
}
