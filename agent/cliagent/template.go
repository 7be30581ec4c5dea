package cliagent

import (
	"maps"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
)

// Template describes how to run an external agent command (see
// clikit.Template); the vendors' built-in ones are BuiltinTemplates.
type Template = clikit.Template

// PromptMode says how a CLI agent gets its prompt (see clikit.PromptMode).
type PromptMode = clikit.PromptMode

// OutputFormat says how a CLI agent's standard output is read (see
// clikit.OutputFormat).
type OutputFormat = clikit.OutputFormat

// The ways of handing a prompt to a CLI agent, and the output format every
// agent has.
const (
	PromptStdin = clikit.PromptStdin
	PromptArg   = clikit.PromptArg
	PromptFile  = clikit.PromptFile
	OutputText  = clikit.OutputText
)

// The placeholders a Template's command and environment may use.
const (
	PlaceholderPrompt     = clikit.PlaceholderPrompt
	PlaceholderPromptFile = clikit.PlaceholderPromptFile
	PlaceholderDir        = clikit.PlaceholderDir
	PlaceholderModel      = clikit.PlaceholderModel
	PlaceholderSession    = clikit.PlaceholderSession
	PlaceholderMaxTurns   = clikit.PlaceholderMaxTurns
)

// ErrInvalidTemplate is returned for a Template that cannot be run.
var ErrInvalidTemplate = clikit.ErrInvalidTemplate

// argv returns the command to run: the resume command when continuing a
// session and the template can, with the placeholders filled in, and
// whether it continues the session.
func argv(t Template, v placeholders) ([]string, bool) {
	args, resuming := t.Command, false
	if v.session != "" && len(t.ResumeCommand) > 0 {
		args, resuming = t.ResumeCommand, true
	} else {
		v.session = ""
	}
	r := v.replacer()
	out := make([]string, 0, len(args))
	for _, a := range args {
		if (v.model == "" && strings.Contains(a, PlaceholderModel)) ||
			(v.session == "" && strings.Contains(a, PlaceholderSession)) ||
			(v.maxTurns == "" && strings.Contains(a, PlaceholderMaxTurns)) {
			continue
		}
		out = append(out, r.Replace(a))
	}
	return out, resuming
}

// env returns the template's environment additions with placeholders
// filled in, as KEY=VALUE, sorted by key.
func templateEnv(t Template, v placeholders) []string {
	r := v.replacer()
	out := make([]string, 0, len(t.Env))
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		out = append(out, k+"="+r.Replace(t.Env[k]))
	}
	return out
}

// placeholders holds the values the placeholders stand for.
type placeholders struct {
	prompt, promptFile, dir, model, session, maxTurns string
}

// replacer replaces every placeholder in one pass, so a value that itself
// holds "{dir}" is not replaced again.
func (v placeholders) replacer() *strings.Replacer {
	return strings.NewReplacer(
		PlaceholderPromptFile, v.promptFile,
		PlaceholderPrompt, v.prompt,
		PlaceholderDir, v.dir,
		PlaceholderModel, v.model,
		PlaceholderSession, v.session,
		PlaceholderMaxTurns, v.maxTurns,
	)
}
