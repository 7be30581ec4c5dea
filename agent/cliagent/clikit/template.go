package clikit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// PromptMode says how a CLI agent gets its prompt.
type PromptMode string

// The ways of handing a prompt to a CLI agent.
const (
	PromptStdin PromptMode = "stdin" // written to the process's standard input
	PromptArg   PromptMode = "arg"   // put in place of {prompt} in the command (an argument is limited in size: 128 KiB on Linux)
	PromptFile  PromptMode = "file"  // written to a file outside the repository whose path replaces {prompt_file}
)

// OutputFormat says how a CLI agent's standard output is read.
type OutputFormat string

// OutputText is the output format every agent has: plain text, the whole
// of stdout is the final output. The other formats are the vendors' (see
// Vendor.Output).
const (
	OutputText OutputFormat = "text"
)

// The placeholders a Template's command and environment may use.
const (
	PlaceholderPrompt     = "{prompt}"      // the prompt text (PromptArg)
	PlaceholderPromptFile = "{prompt_file}" // the path of a file holding the prompt (PromptFile)
	PlaceholderDir        = "{dir}"         // the repository's absolute path
	PlaceholderModel      = "{model}"       // Options.Model
	PlaceholderSession    = "{session}"     // Session.SessionID, the session to continue
	PlaceholderMaxTurns   = "{max_turns}"   // Options.MaxTurns
)

// ErrInvalidTemplate is returned for a Template that cannot be run.
var ErrInvalidTemplate = errors.New("agent: invalid CLI template")

// Template describes how to run an external agent command. It is data —
// an argument list with placeholders, not a shell string — so it can live
// in a configuration file.
//
// Placeholders ({prompt}, {prompt_file}, {dir}, {model}, {session},
// {max_turns}) may appear anywhere inside an argument or an Env value. An
// argument that uses {model}, {session} or {max_turns} is left out when
// that value is empty (or 0), so a template says "--model={model}" to pass
// the model only when there is one.
type Template struct {
	// Command is the argument list of a fresh session; Command[0] is the
	// program, looked up in PATH when it has no slash.
	Command []string `yaml:"command" json:"command"`
	// ResumeCommand is the argument list of a session that continues
	// Session.SessionID; it must use {session}. When it is empty the agent
	// cannot continue a session and every session starts fresh.
	ResumeCommand []string `yaml:"resume_command,omitempty" json:"resume_command,omitempty"`
	// Env is added to the environment the command gets.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// PassEnv names the secret variables the agent gets from the
	// environment. The others named like secrets (…_API_KEY, …_TOKEN,
	// …_SECRET, …_PASSWORD, …) are withheld, since the agent runs commands
	// in the repository. Env is always passed.
	PassEnv []string `yaml:"pass_env,omitempty" json:"pass_env,omitempty"`
	// Prompt is how the prompt is handed over; empty means PromptStdin.
	Prompt PromptMode `yaml:"prompt,omitempty" json:"prompt,omitempty"`
	// Output is how stdout is read; empty means OutputText.
	Output OutputFormat `yaml:"output,omitempty" json:"output,omitempty"`
	// Writable lists the paths, besides those Driver.Run names, that a
	// session confined with Landlock may write beneath: what an agent other
	// than its Vendor.State names keeps outside the repository.
	Writable []string `yaml:"writable,omitempty" json:"writable,omitempty"`
}

// Clone returns a deep copy of t.
func (t Template) Clone() Template {
	t.Command = slices.Clone(t.Command)
	t.ResumeCommand = slices.Clone(t.ResumeCommand)
	t.Env = maps.Clone(t.Env)
	t.PassEnv = slices.Clone(t.PassEnv)
	t.Writable = slices.Clone(t.Writable)
	return t
}

// Validate reports what makes t unrunnable: no command, an unknown prompt
// mode, a prompt placeholder that does not match the
// mode, or a resume command without {session}. The errors match
// ErrInvalidTemplate. Whether a vendor reads its output format is the
// driver's to check (cliagent.CheckTemplate).
func (t Template) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidTemplate, fmt.Sprintf(format, args...))
	}
	if len(t.Command) == 0 || t.Command[0] == "" {
		return bad("command is empty")
	}
	if len(t.ResumeCommand) > 0 && t.ResumeCommand[0] == "" {
		return bad("resume_command has no program")
	}
	need := ""
	switch t.EffectivePrompt() {
	case PromptStdin:
	case PromptArg:
		need = PlaceholderPrompt
	case PromptFile:
		need = PlaceholderPromptFile
	default:
		return bad("prompt %q is not %s, %s or %s", t.Prompt, PromptStdin, PromptArg, PromptFile)
	}
	for _, c := range []struct {
		name string
		args []string
	}{{"command", t.Command}, {"resume_command", t.ResumeCommand}} {
		if len(c.args) == 0 {
			continue
		}
		joined := strings.Join(c.args, "\x00")
		if need != "" && !strings.Contains(joined, need) {
			return bad("prompt %s needs %s in %s", t.EffectivePrompt(), need, c.name)
		}
		for _, other := range []string{PlaceholderPrompt, PlaceholderPromptFile} {
			if other != need && strings.Contains(joined, other) {
				return bad("%s uses %s but prompt is %s", c.name, other, t.EffectivePrompt())
			}
		}
	}
	if len(t.ResumeCommand) > 0 && !strings.Contains(strings.Join(t.ResumeCommand, "\x00"), PlaceholderSession) {
		return bad("resume_command does not use %s", PlaceholderSession)
	}
	return nil
}

// EffectivePrompt returns how the prompt is handed over: Prompt, or
// PromptStdin when it is empty.
func (t Template) EffectivePrompt() PromptMode {
	if t.Prompt == "" {
		return PromptStdin
	}
	return t.Prompt
}

// EffectiveOutput returns how stdout is read: Output, or OutputText when
// it is empty.
func (t Template) EffectiveOutput() OutputFormat {
	if t.Output == "" {
		return OutputText
	}
	return t.Output
}
