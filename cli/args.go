package cli

import (
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
)

// cmdArgs reads a command's positional argument and the flags given after
// it: urfave/cli stops at the first argument, but users type
// `gaffer reject RUN --feedback "…"` as the commands gaffer prints.
type cmdArgs struct {
	c     *ucli.Context
	run   string
	extra map[string]string
}

// parseArgs reads RUN and the trailing flags; bools lists the flags that
// take no value (besides the command's boolean flags). A flag the command
// does not define is the usage error urfave/cli gives before RUN.
func parseArgs(c *ucli.Context, bools ...string) (cmdArgs, error) {
	a := cmdArgs{c: c, extra: map[string]string{}}
	known := commandFlags(c)
	for _, b := range bools {
		known[b] = true
	}
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, ok := strings.CutPrefix(arg, "--")
		if !ok {
			name, ok = strings.CutPrefix(arg, "-")
		}
		if !ok || name == "" {
			if a.run != "" {
				return a, exitf(ExitUsage, "unexpected argument %q", arg)
			}
			a.run = arg
			continue
		}
		n, v, has := strings.Cut(name, "=")
		isBool, ok := known[n]
		switch {
		case !ok:
			return a, usageErrorf("flag provided but not defined: -%s", n)
		case n == "help" || n == "h":
			return a, ucli.ShowCommandHelp(c, c.Command.Name)
		case has:
			a.extra[n] = v
			continue
		}
		if isBool {
			a.extra[name] = "true"
			continue
		}
		if i+1 >= len(args) {
			return a, exitf(ExitUsage, "flag --%s needs a value", name)
		}
		a.extra[name] = args[i+1]
		i++
	}
	if a.run != "" {
		if err := host.CheckRunID(a.run); err != nil {
			return a, exitf(ExitUsage, "%w", err)
		}
	}
	for _, g := range []string{"repo", "store", "profile", "log-level", "log-format", "pace"} {
		if v, ok := a.extra[g]; ok {
			if err := c.Set(g, v); err != nil {
				return a, exitf(ExitUsage, "--%s: %w", g, err)
			}
		}
	}
	return a, nil
}

// commandFlags maps the names (and aliases) of c's command's flags to
// whether the flag is boolean (takes no value); help is one of them.
func commandFlags(c *ucli.Context) map[string]bool {
	known := map[string]bool{"help": true, "h": true}
	if c.Command == nil {
		return known
	}
	for _, f := range c.Command.Flags {
		_, isBool := f.(*ucli.BoolFlag)
		for _, n := range f.Names() {
			known[n] = isBool
		}
	}
	return known
}

func (a cmdArgs) String(name string) string {
	if v, ok := a.extra[name]; ok {
		return v
	}
	return a.c.String(name)
}

func (a cmdArgs) Bool(name string) bool {
	if v, ok := a.extra[name]; ok {
		b, _ := strconv.ParseBool(v)
		return b
	}
	return a.c.Bool(name)
}

func (a cmdArgs) Uint64(name string) (uint64, error) {
	if v, ok := a.extra[name]; ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, exitf(ExitUsage, "--%s: %w", name, err)
		}
		return n, nil
	}
	return a.c.Uint64(name), nil
}

// paceFlag is --pace for the commands that continue a run in this process:
// it slows the script driver for this process only; the run keeps the pace
// it was started with.
func paceFlag() ucli.Flag {
	return &ucli.DurationFlag{Name: "pace", EnvVars: []string{"GAFFER_PACE"}, Usage: "pause before each agent action in this process (overrides the run's own pace)"}
}
