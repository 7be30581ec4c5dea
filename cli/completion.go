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
	var cmd, sub *ucli.Command
	var globals []string // --repo and --store as given, for the run ids
	positional := 0
	valueNext := false
	flags := func() []ucli.Flag {
		switch {
		case sub != nil:
			return sub.Flags
		case cmd != nil:
			return cmd.Flags
		}
		return app.Flags
	}
	for i, w := range before {
		if valueNext {
			valueNext = false
			continue
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			n, v, has := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f := findFlag(append(slices.Clone(flags()), app.Flags...), n)
			_, isBool := f.(*ucli.BoolFlag)
			if n == "repo" || n == "store" {
				switch {
				case has:
					globals = append(globals, "--"+n, expandHome(v))
				case i+1 < len(before):
					globals = append(globals, "--"+n, expandHome(before[i+1]))
				}
			}
			valueNext = f != nil && !isBool && !has
			continue
		}
		switch {
		case cmd == nil:
			cmd = app.Command(w)
		case sub == nil && len(cmd.Subcommands) > 0:
			sub = cmd.Command(w)
		default:
			positional++
		}
	}
	var out []string
	switch {
	case valueNext:
		return nil // a flag's value: files are the shell's own completion
	case strings.HasPrefix(cur, "-"):
		for _, f := range flags() {
			// A command's hidden copies of the global flags
			// (withTrailingGlobals) are offered: they work there.
			name := f.Names()[0]
			if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() && (cmd == nil || findFlag(app.Flags, name) == nil) {
				continue
			}
			out = append(out, "--"+name)
		}
	case cmd == nil:
		for _, c := range app.Commands {
			if !c.Hidden {
				out = append(out, c.Name)
			}
		}
	case sub == nil && len(cmd.Subcommands) > 0:
		for _, c := range cmd.Subcommands {
			if !c.Hidden {
				out = append(out, c.Name)
			}
		}
	case cmd.Name == "completion" && positional == 0:
		out = []string{"bash", "fish", "zsh"}
	case positional == 0 && strings.Contains(argsUsage(cmd, sub), "RUN"):
		out = a.runIDs(globals)
	}
	var match []string
	for _, s := range out {
		if strings.HasPrefix(s, cur) {
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
