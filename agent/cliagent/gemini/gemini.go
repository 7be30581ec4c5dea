package gemini

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
)

// Name is the built-in template's name in gaffer.yaml.
const Name = "gemini"

// Output is the JSON lines of "gemini --output-format stream-json".
const Output clikit.OutputFormat = "gemini-jsonl"

// Vendor is the Gemini CLI's knowledge for the cli driver.
type Vendor struct{}

var _ clikit.Vendor = Vendor{}

// New returns the Gemini CLI vendor.
func New() clikit.Vendor { return Vendor{} }

// Name returns "gemini".
func (Vendor) Name() string { return Name }

// Output returns gemini-jsonl.
func (Vendor) Output() clikit.OutputFormat { return Output }

// Template returns the template for the Gemini CLI: headless (its
// standard input is not a terminal, so the prompt is read from it), JSON
// lines on stdout, every tool approved (--yolo: the session runs
// unattended in its own repository) in a work tree it trusts
// (--skip-trust), the model when set, and --resume SESSION to continue a
// session (it finds one only in the same project directory and home). Its
// API keys are the secrets it is passed.
func (Vendor) Template() clikit.Template {
	base := []string{"gemini", "--output-format", "stream-json", "--yolo", "--skip-trust", "--model={model}"}
	return clikit.Template{
		Command:       base,
		ResumeCommand: append(slices.Clone(base), "--resume", clikit.PlaceholderSession),
		PassEnv:       []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		Prompt:        clikit.PromptStdin,
		Output:        Output,
	}
}

// State returns $GEMINI_CLI_HOME/.gemini when GEMINI_CLI_HOME is set, else
// $HOME/.gemini: its settings, its sessions (which --resume reads) and its
// project registry. Its error reports go to TMPDIR, which the driver gives
// each session.
func (Vendor) State(env []string) (dirs, files []string) {
	if h := clikit.Getenv(env, "GEMINI_CLI_HOME"); h != "" {
		return []string{filepath.Join(h, ".gemini")}, nil
	}
	if d := clikit.InHome(env, ".gemini"); d != "" {
		return []string{d}, nil
	}
	return nil, nil
}

// Args returns nil.
func (Vendor) Args(agent.Session) []string { return nil }

// SkipsPrompts names what --yolo and --approval-mode=yolo turn off.
func (Vendor) SkipsPrompts(arg string) string {
	if arg == "--yolo" || arg == "-y" || arg == "--approval-mode=yolo" {
		return "approves all the agent's tool calls: it edits files and runs commands without asking"
	}
	return ""
}

// Outage is clikit.CommonOutage on the API error code Parse reads from
// the result's error ("[API Error: {"error":{"code":500,…"), its error
// text and its stderr ("status: 500").
func (Vendor) Outage(run clikit.Run, res clikit.Result) string {
	return clikit.CommonOutage(run, res, false)
}

// errorCode returns the HTTP status in a Gemini API error text such as
// `[API Error: {"error":{"code":503,"message":…}}]`, or 0.
func errorCode(text string) int {
	_, rest, ok := strings.Cut(text, `"code":`)
	if !ok {
		return 0
	}
	n := 0
	for _, c := range strings.TrimSpace(rest) {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	if n < 100 || n > 599 {
		return 0
	}
	return n
}
