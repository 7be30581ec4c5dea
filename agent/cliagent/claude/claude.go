package claude

import (
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
)

// Name is the built-in template's name in gaffer.yaml.
const Name = "claude"

// Output is Claude Code's --output-format json (one result object) or
// stream-json (JSON lines ending with the result object).
const Output clikit.OutputFormat = "claude-json"

// Vendor is Claude Code's knowledge for the cli driver.
type Vendor struct{}

var _ clikit.Vendor = Vendor{}

// New returns the Claude Code vendor.
func New() clikit.Vendor { return Vendor{} }

// Name returns "claude".
func (Vendor) Name() string { return Name }

// Output returns claude-json.
func (Vendor) Output() clikit.OutputFormat { return Output }

// Template returns the template for Claude Code ("claude -p"): the
// prompt on stdin, JSON lines on stdout (stream-json, so its messages can
// be followed as they come; the last line is the result), permissions
// skipped (the session runs unattended in its own repository), the model
// and the turn limit when they are set, --resume to continue a session.
// IS_SANDBOX=1 lets --dangerously-skip-permissions start when gaffer runs
// as root, as it does in containers. Claude Code finds a session to resume
// only with the same HOME and the same working directory as the session
// that started it. Its API key and tokens are the secrets it is passed.
func (Vendor) Template() clikit.Template {
	base := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model={model}", "--max-turns={max_turns}"}
	return clikit.Template{
		Command:       base,
		ResumeCommand: append(slices.Clone(base), "--resume", clikit.PlaceholderSession),
		Env:           map[string]string{"IS_SANDBOX": "1"},
		PassEnv:       []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
		Prompt:        clikit.PromptStdin,
		Output:        Output,
	}
}

// State returns where Claude Code keeps what it must write:
// $CLAUDE_CONFIG_DIR when set (it then holds .claude.json too), else
// $HOME/.claude and the file $HOME/.claude.json. Claude Code 2.1 writes
// .claude.json through a temporary file beside it and locks it with a
// directory $HOME/.claude.json.lock; confined, both are refused (HOME
// itself is not writable) and it writes the file in place, unlocked,
// instead. A missing .claude.json cannot be created, so its global
// settings are then not kept; sessions and --resume, which live under
// .claude, work.
func (Vendor) State(env []string) (dirs, files []string) {
	if c := clikit.Getenv(env, "CLAUDE_CONFIG_DIR"); c != "" {
		return []string{c}, nil
	}
	if d := clikit.InHome(env, ".claude"); d != "" {
		return []string{d}, []string{clikit.InHome(env, ".claude.json")}
	}
	return nil, nil
}

// Args returns --disallowedTools for the tools session s does not allow.
func (Vendor) Args(s agent.Session) []string {
	if off := disallowed(s); off != "" {
		return []string{"--disallowedTools=" + off}
	}
	return nil
}

// SkipsPrompts names what --dangerously-skip-permissions turns off.
func (Vendor) SkipsPrompts(arg string) string {
	if strings.SplitN(arg, "=", 2)[0] == "--dangerously-skip-permissions" {
		return "skips the agent's permission prompts: it edits files and runs commands without asking"
	}
	return ""
}

// Outage is clikit.CommonOutage, which reads Claude Code's
// api_error_status and api_error; the error text of its result is the
// agent's own last words, which may name anything, unless it is an "API
// Error".
func (Vendor) Outage(run clikit.Run, res clikit.Result) string {
	return clikit.CommonOutage(run, res, res.Parsed && !strings.HasPrefix(strings.TrimSpace(res.ErrText), "API Error"))
}

// tools maps the session tools to the Claude Code 2.1 tools that do the
// same work. Deleting has no tool of its own (Bash does it).
var tools = []struct {
	tool   string
	claude []string
}{
	{agent.ToolRead, []string{"Read"}},
	{agent.ToolWrite, []string{"Write", "NotebookEdit"}},
	{agent.ToolEdit, []string{"Edit", "NotebookEdit"}},
	{agent.ToolList, []string{"Glob"}},
	{agent.ToolGrep, []string{"Grep"}},
	{agent.ToolRun, []string{"Bash"}},
}

// disallowed returns the Claude Code tools to deny a session (its
// --disallowedTools), comma separated: those of the session tools s does
// not allow (see Session.Allows); "" when it allows them all.
func disallowed(s agent.Session) string {
	var off []string
	for _, m := range tools {
		if s.Allows(m.tool) {
			continue
		}
		for _, c := range m.claude {
			if !slices.Contains(off, c) {
				off = append(off, c)
			}
		}
	}
	return strings.Join(off, ",")
}
