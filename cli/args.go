package cli

import (
	"context"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"
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
// take no value.
func parseArgs(c *ucli.Context, bools ...string) (cmdArgs, error) {
	a := cmdArgs{c: c, extra: map[string]string{}}
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
		if n, v, has := strings.Cut(name, "="); has {
			a.extra[n] = v
			continue
		}
		isBool := false
		for _, b := range bools {
			isBool = isBool || b == name
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
	for _, g := range []string{"repo", "store", "pace"} {
		if v, ok := a.extra[g]; ok {
			if err := c.Set(g, v); err != nil {
				return a, exitf(ExitUsage, "--%s: %w", g, err)
			}
		}
	}
	return a, nil
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

// withRun is the action of a command on one run: it reads RUN and the
// trailing flags, opens the store (or borrows the holding process's) and
// calls fn, closing the store when fn returns.
func withRun(io IO, fn func(ctx context.Context, e *env, a cmdArgs) error) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		a, err := parseArgs(c)
		if err != nil {
			return err
		}
		e, err := openEnv(c, io)
		if err != nil {
			return err
		}
		defer e.Close()
		return fn(c.Context, e, a)
	}
}

// paceFlag is --pace for the commands that continue a run in this process:
// it slows the script driver for this process only; the run keeps the pace
// it was started with.
func paceFlag() ucli.Flag {
	return &ucli.DurationFlag{Name: "pace", EnvVars: []string{"GAFFER_PACE"}, Usage: "pause before each agent action in this process (overrides the run's own pace)"}
}
