package cliagent

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

// The output formats a Driver understands.
const (
	// OutputClaudeJSON is Claude Code's --output-format json (one result
	// object) or stream-json (JSON lines ending with the result object).
	OutputClaudeJSON OutputFormat = "claude-json"
	// OutputCodexJSONL is the JSON lines of "codex exec --json".
	OutputCodexJSONL OutputFormat = "codex-jsonl"
	// OutputText is plain text: the whole of stdout is the final output.
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
	// than Claude Code and Codex keeps outside the repository.
	Writable []string `yaml:"writable,omitempty" json:"writable,omitempty"`
}

// ClaudeCode returns the template for Claude Code ("claude -p"):
// the prompt on stdin, JSON lines on stdout (stream-json, so its messages
// can be followed as they come; the last line is the result), permissions
// skipped (the session runs
// unattended in its own repository), the model and the turn limit when
// they are set, --resume to continue a session.
// IS_SANDBOX=1 lets --dangerously-skip-permissions start when gaffer runs
// as root, as it does in containers. Claude Code finds a session to resume
// only with the same HOME and the same working directory as the session
// that started it. Its API key and tokens are the secrets it is passed.
func ClaudeCode() Template {
	base := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model={model}", "--max-turns={max_turns}"}
	return Template{
		Command:       base,
		ResumeCommand: append(slices.Clone(base), "--resume", PlaceholderSession),
		Env:           map[string]string{"IS_SANDBOX": "1"},
		PassEnv:       []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
		Prompt:        PromptStdin,
		Output:        OutputClaudeJSON,
	}
}

// Codex returns the template for OpenAI's Codex ("codex exec"):
// the prompt on stdin ("-"), JSON lines on stdout, approvals and sandbox
// bypassed (the session runs unattended in its own repository), and
// "resume SESSION" to continue a thread. It is tried against the real
// program (pinned in internal/codexcli) in cli's outage tests.
func Codex() Template {
	base := []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "--cd={dir}", "--model={model}"}
	return Template{
		Command:       append(slices.Clone(base), "-"),
		ResumeCommand: append(slices.Clone(base), "resume", PlaceholderSession, "-"),
		PassEnv:       []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Prompt:        PromptStdin,
		Output:        OutputCodexJSONL,
	}
}

// BuiltinTemplates returns the ready-made templates by name: "claude"
// and "codex". The map is new on every call.
func BuiltinTemplates() map[string]Template {
	return map[string]Template{"claude": ClaudeCode(), "codex": Codex()}
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
// mode or output format, a prompt placeholder that does not match the
// mode, or a resume command without {session}. The errors match
// ErrInvalidTemplate.
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
	switch t.Output {
	case "", OutputClaudeJSON, OutputCodexJSONL, OutputText:
	default:
		return bad("output %q is not %s, %s or %s", t.Output, OutputClaudeJSON, OutputCodexJSONL, OutputText)
	}
	need := ""
	switch t.prompt() {
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
			return bad("prompt %s needs %s in %s", t.prompt(), need, c.name)
		}
		for _, other := range []string{PlaceholderPrompt, PlaceholderPromptFile} {
			if other != need && strings.Contains(joined, other) {
				return bad("%s uses %s but prompt is %s", c.name, other, t.prompt())
			}
		}
	}
	if len(t.ResumeCommand) > 0 && !strings.Contains(strings.Join(t.ResumeCommand, "\x00"), PlaceholderSession) {
		return bad("resume_command does not use %s", PlaceholderSession)
	}
	return nil
}

func (t Template) prompt() PromptMode {
	if t.Prompt == "" {
		return PromptStdin
	}
	return t.Prompt
}

func (t Template) output() OutputFormat {
	if t.Output == "" {
		return OutputText
	}
	return t.Output
}

// argv returns the command to run: the resume command when continuing a
// session and the template can, with the placeholders filled in, and
// whether it continues the session.
func (t Template) argv(v placeholders) ([]string, bool) {
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
func (t Template) env(v placeholders) []string {
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
