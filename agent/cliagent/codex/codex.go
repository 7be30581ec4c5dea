package codex

import (
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
)

// Name is the built-in template's name in gaffer.yaml.
const Name = "codex"

// Output is the JSON lines of "codex exec --json".
const Output clikit.OutputFormat = "codex-jsonl"

// Vendor is OpenAI Codex's knowledge for the cli driver.
type Vendor struct{}

var _ clikit.Vendor = Vendor{}

// New returns the Codex vendor.
func New() clikit.Vendor { return Vendor{} }

// Name returns "codex".
func (Vendor) Name() string { return Name }

// Output returns codex-jsonl.
func (Vendor) Output() clikit.OutputFormat { return Output }

// Template returns the template for OpenAI's Codex ("codex exec"): the
// prompt on stdin ("-"), JSON lines on stdout, approvals and sandbox
// bypassed (the session runs unattended in its own repository), and
// "resume SESSION" to continue a thread. It is tried against the real
// program (pinned in Pin) in cli's outage tests.
func (Vendor) Template() clikit.Template {
	base := []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "--cd={dir}", "--model={model}"}
	return clikit.Template{
		Command:       append(slices.Clone(base), "-"),
		ResumeCommand: append(slices.Clone(base), "resume", clikit.PlaceholderSession, "-"),
		PassEnv:       []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Prompt:        clikit.PromptStdin,
		Output:        Output,
	}
}

// State returns $CODEX_HOME when set, else $HOME/.codex (tested with the
// real Codex CLI).
func (Vendor) State(env []string) (dirs, files []string) {
	if d := clikit.StateDir(env, "CODEX_HOME", ".codex"); d != "" {
		return []string{d}, nil
	}
	return nil, nil
}

// Args returns nil: Codex takes no list of tools to deny.
func (Vendor) Args(agent.Session) []string { return nil }

// SkipsPrompts names what --dangerously-bypass-approvals-and-sandbox,
// --yolo and --full-auto turn off.
func (Vendor) SkipsPrompts(arg string) string {
	switch strings.SplitN(arg, "=", 2)[0] {
	case "--dangerously-bypass-approvals-and-sandbox", "--yolo":
		return "skips the agent's approvals and sandbox: it edits files and runs commands without asking"
	case "--full-auto":
		return "lets the agent edit files and run commands without asking"
	}
	return ""
}

// Outage is clikit.CommonOutage on Codex's turn.failed and error texts
// and its stderr.
func (Vendor) Outage(run clikit.Run, res clikit.Result) string {
	return clikit.CommonOutage(run, res, false)
}
