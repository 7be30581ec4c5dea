package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/runview"
)

// Shell completion: `gaffer completion SHELL` prints a script that asks
// the hidden `gaffer __complete WORDS…` for candidates (the words after
// "gaffer", the last one being completed): commands, subcommands, a
// command's flags (the global ones too, which work after it), and run
// ids where a command takes RUN.

// completionScript is the script `gaffer completion SHELL` prints.
func completionScript(shell string) (string, bool) {
	s, ok := map[string]string{
		"bash": `# gaffer completion for bash: source <(gaffer completion bash)
_gaffer() {
	local IFS=$'\n'
	COMPREPLY=($(gaffer __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _gaffer gaffer
`,
		"zsh": `#compdef gaffer
# gaffer completion for zsh: source <(gaffer completion zsh) after compinit,
# or save it as _gaffer in a directory of $fpath.
_gaffer() {
	local -a candidates
	# (Q): the words as typed, quotes and all; gaffer wants them unquoted.
	candidates=("${(@f)$(gaffer __complete "${(@Q)words[2,CURRENT]}" 2>/dev/null)}")
	if (( ${#candidates} )) && [[ -n ${candidates[1]} ]]; then
		compadd -a candidates
	else
		_files
	fi
}
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
	_gaffer "$@"
else
	compdef _gaffer gaffer
fi
`,
		"fish": `# gaffer completion for fish: gaffer completion fish | source
function __gaffer_complete
	set -l words (commandline -opc) (commandline -ct)
	set -l candidates (gaffer __complete $words[2..-1] 2>/dev/null)
	if set -q candidates[1]
		printf '%s\n' $candidates
	else
		__fish_complete_path (commandline -ct)
	end
end
complete -c gaffer -f -a '(__gaffer_complete)'
`,
	}[shell]
	return s, ok
}

func (a *app) completionCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Completes commands, flags and run ids. Load it with\n" +
			"  bash: source <(gaffer completion bash)     (in ~/.bashrc)\n" +
			"  zsh:  source <(gaffer completion zsh)      (in ~/.zshrc, after compinit)\n" +
			"  fish: gaffer completion fish | source      (in ~/.config/fish/config.fish)",
		OnUsageError: onUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("completion: want one shell: bash, zsh or fish")
			}
			script, ok := completionScript(c.Args().First())
			if !ok {
				return usageErrorf("completion: unknown shell %q: want bash, zsh or fish", c.Args().First())
			}
			_, err := io.WriteString(a.stdout, script)
			return err
		},
	}
}

func (a *app) completeCommand() *ucli.Command {
	return &ucli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *ucli.Context) error {
			for _, s := range a.complete(c.App, c.Args().Slice()) {
				fmt.Fprintln(a.stdout, s)
			}
			return nil
		},
	}
}

// complete returns the candidates for the last of words (the words after
// "gaffer" on the command line), filtered by what it starts with.
func (a *app) complete(app *ucli.App, words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	line := parseCompletionLine(app, before)
	if line.valueNext {
		return nil // a flag's value: files are the shell's own completion
	}
	return withPrefix(a.completionCandidates(app, line, cur), cur)
}

// completionLine is what the words before the one being completed say:
// the command and subcommand they name, how many positional arguments
// follow them, and whether the next word is a flag's value.
type completionLine struct {
	cmd, sub   *ucli.Command
	globals    []string // --repo and --store as given, for the run ids
	positional int
	valueNext  bool
}

// parseCompletionLine reads the words before the one being completed as
// the command line parser would: flags (with their values), then the
// command, its subcommand and positional arguments.
func parseCompletionLine(app *ucli.App, before []string) completionLine {
	var l completionLine
	for i, w := range before {
		if l.valueNext {
			l.valueNext = false
			continue
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			l.readFlag(app, w, before[i+1:])
			continue
		}
		switch {
		case l.cmd == nil:
			l.cmd = app.Command(w)
		case l.sub == nil && len(l.cmd.Subcommands) > 0:
			l.sub = l.cmd.Command(w)
		default:
			l.positional++
		}
	}
	return l
}

// readFlag records the flag w (rest being the words after it): whether
// its value is the next word, and --repo and --store for the run ids.
func (l *completionLine) readFlag(app *ucli.App, w string, rest []string) {
	n, v, has := strings.Cut(strings.TrimLeft(w, "-"), "=")
	f := findFlag(append(slices.Clone(l.flags(app)), app.Flags...), n)
	_, isBool := f.(*ucli.BoolFlag)
	if n == "repo" || n == "store" {
		switch {
		case has:
			l.globals = append(l.globals, "--"+n, expandHome(v))
		case len(rest) > 0:
			l.globals = append(l.globals, "--"+n, expandHome(rest[0]))
		}
	}
	l.valueNext = f != nil && !isBool && !has
}

// flags returns the flags of the innermost command named so far.
func (l completionLine) flags(app *ucli.App) []ucli.Flag {
	switch {
	case l.sub != nil:
		return l.sub.Flags
	case l.cmd != nil:
		return l.cmd.Flags
	}
	return app.Flags
}

// completionCandidates returns every word that may stand where cur is,
// before filtering: flags, commands, subcommands, shells or run ids.
func (a *app) completionCandidates(app *ucli.App, l completionLine, cur string) []string {
	switch {
	case strings.HasPrefix(cur, "-"):
		return flagCandidates(app, l)
	case l.cmd == nil:
		return visibleNames(app.Commands)
	case l.sub == nil && len(l.cmd.Subcommands) > 0:
		return visibleNames(l.cmd.Subcommands)
	case l.cmd.Name == "completion" && l.positional == 0:
		return []string{"bash", "fish", "zsh"}
	case l.positional == 0 && strings.Contains(argsUsage(l.cmd, l.sub), "RUN"):
		return a.runIDs(l.globals)
	}
	return nil
}

// flagCandidates returns the --names of the innermost command's visible
// flags. A command's hidden copies of the global flags
// (withTrailingGlobals) are offered: they work there.
func flagCandidates(app *ucli.App, l completionLine) []string {
	var out []string
	for _, f := range l.flags(app) {
		name := f.Names()[0]
		if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() && (l.cmd == nil || findFlag(app.Flags, name) == nil) {
			continue
		}
		out = append(out, "--"+name)
	}
	return out
}

// visibleNames returns the names of the commands that are not hidden.
func visibleNames(cmds []*ucli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}

// withPrefix returns the words of out that start with prefix.
func withPrefix(out []string, prefix string) []string {
	var match []string
	for _, s := range out {
		if strings.HasPrefix(s, prefix) {
			match = append(match, s)
		}
	}
	return match
}

// expandHome expands a leading ~ as the shell would have: the completion
// scripts pass the words as typed, and ~/proj is not a directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

func argsUsage(cmd, sub *ucli.Command) string {
	if sub != nil {
		return sub.ArgsUsage
	}
	return cmd.ArgsUsage
}

func findFlag(flags []ucli.Flag, name string) ucli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// runIDs lists the runs of the repository and store that globals name, as
// `gaffer list --json` does; none when that fails.
func (a *app) runIDs(globals []string) []string {
	var out bytes.Buffer
	sub := NewWithIO(a.version, IO{Out: &out, Err: io.Discard, Terminal: func() bool { return false }, Getenv: a.io.Getenv})
	args := append(append([]string{"gaffer"}, globals...), "list", "--json")
	if err := sub.Run(args); err != nil {
		return nil
	}
	var views []runview.Run
	if json.Unmarshal(out.Bytes(), &views) != nil {
		return nil
	}
	ids := make([]string, 0, len(views))
	for _, v := range views {
		ids = append(ids, v.RunID)
	}
	return ids
}
