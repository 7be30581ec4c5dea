package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/cliagent/codex"
	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/fakeresponses"
	"github.com/gaffer-dev/gaffer/internal/npmpin/npmpintest"
)

// These tests put gaffer mcp under the real coding agents users run it
// from, each against a scripted model server on 127.0.0.1 (AGENT-CLIS.md):
// the model's side calls gaffer's tools, the agent runs `gaffer mcp` and
// carries the calls.

// awaitingRun runs the demo plan in dir as id with the script driver and
// no terminal: the run stops waiting for its plan's approval.
func awaitingRun(t *testing.T, bin, dir, plan, script, id string) {
	t.Helper()
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", id)
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
}

// waitRunStatus polls `gaffer status --json` until the run's status is
// want.
func waitRunStatus(t *testing.T, bin, dir, id, want string) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		v, err := tryStatus(bin, dir, id)
		if err == nil && v.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %+v (%v), want %s", id, v.Status, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMCPClaudeCodeApprovesARun: Claude Code, given gaffer with
// --mcp-config, calls mcp__gaffer__run_status and then
// mcp__gaffer__run_approve as its scripted model asks; the run is
// approved and finishes.
func TestMCPClaudeCodeApprovesARun(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	claudeBin := npmpintest.ForTest(t, claude.Pin)
	dir, plan, script := demoRepo(t)
	const id = "r-20260101-mcpcc1"
	awaitingRun(t, bin, dir, plan, script, id)

	srv, err := fakeanthropic.Start(func(r fakeanthropic.Request) fakeanthropic.Reply {
		switch n := strings.Count(string(r.Body), `"tool_result"`); {
		case !r.Contains("APPROVE THE GAFFER RUN"):
			return fakeanthropic.Reply{Text: "ok"} // a request of Claude Code's own
		case n == 0:
			return fakeanthropic.Reply{Text: "Checking the run.", ToolUses: []fakeanthropic.ToolUse{{Name: "mcp__gaffer__run_status", Input: map[string]string{"run_id": id}}}}
		case n == 1 && r.Contains("awaiting_approval"):
			return fakeanthropic.Reply{Text: "It waits for approval.", ToolUses: []fakeanthropic.ToolUse{{Name: "mcp__gaffer__run_approve", Input: map[string]string{"run_id": id, "feedback": "approved from Claude Code"}}}}
		case n == 1:
			return fakeanthropic.Reply{Text: "The run does not wait for approval: not approving."}
		}
		return fakeanthropic.Reply{Text: "Approved the run."}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	cfg := filepath.Join(t.TempDir(), "mcp.json")
	// An MCP client gives a server a small environment of its own (HOME,
	// PATH, …) and what the config's env adds: here the Go caches, which
	// the run's script commands build with.
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"gaffer": map[string]any{"command": bin, "args": []string{"--repo", dir, "mcp"},
		"env": goCaches(t)}}})
	writeTestFile(t, cfg, string(b))
	cmd := exec.Command(claudeBin, "-p", "APPROVE THE GAFFER RUN "+id, "--output-format", "json", "--mcp-config", cfg, "--strict-mcp-config",
		"--dangerously-skip-permissions", "--model", "claude-sonnet-4-5")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8", "IS_SANDBOX=1",
		"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	var res struct {
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.IsError || res.Result != "Approved the run." {
		t.Fatalf("claude's result: %v\n%s", err, out)
	}
	var approved bool
	for _, r := range srv.Requests() {
		// The approval's tool result came back to the model.
		approved = approved || strings.Count(string(r.Body), `"tool_result"`) == 2 && r.Contains("handed_on")
	}
	if !approved {
		t.Errorf("no request carried run_approve's result")
	}
	waitRunStatus(t, bin, dir, id, "completed")
	waitDetached(t, dir)
}

// TestMCPCodexCallsATool: Codex, with gaffer in its config.toml's
// [mcp_servers.gaffer], calls run_status for its scripted model, and the
// run's view comes back to the model.
func TestMCPCodexCallsATool(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	codexBin := npmpintest.ForTest(t, codex.Pin)
	dir, plan, script := demoRepo(t)
	const id = "r-20260101-mcpcx1"
	awaitingRun(t, bin, dir, plan, script, id)

	srv, err := fakeresponses.Start(func(r fakeresponses.Request) fakeresponses.Reply {
		switch {
		case !r.Contains("STATUS OF THE GAFFER RUN"):
			return fakeresponses.Reply{Text: "ok"}
		case !r.HasCallOutput():
			return fakeresponses.Reply{Text: "Checking.", Calls: []fakeresponses.Call{{Name: codexToolName(r, "run_status"), Arguments: map[string]string{"run_id": id}}}}
		}
		return fakeresponses.Reply{Text: "The run waits for approval."}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(home, ".codex", "config.toml"), `model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "`+srv.URL+`"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 0

[mcp_servers.gaffer]
command = "`+bin+`"
args = ["--repo", "`+dir+`", "mcp"]
`)
	cmd := exec.Command(codexBin, "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "--cd="+dir,
		"--model=gpt-5", "STATUS OF THE GAFFER RUN "+id)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "OPENAI_API_KEY=sk-test"}
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex: %v\n%s", err, out)
	}
	var answered bool
	for _, r := range srv.Requests() {
		answered = answered || r.HasCallOutput() && r.Contains("awaiting_approval") && r.Contains(id)
	}
	if !answered {
		t.Fatalf("no request carried run_status's view of the run\ncodex:\n%s", out)
	}
}

// codexToolName is the name Codex offers gaffer's tool under in r's tool
// list (mcp__gaffer__run_status, or as its version spells it).
func codexToolName(r fakeresponses.Request, tool string) string {
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(r.Body, &body)
	for _, tl := range body.Tools {
		if strings.HasSuffix(tl.Name, tool) && strings.Contains(tl.Name, "gaffer") {
			return tl.Name
		}
	}
	return "mcp__gaffer__" + tool
}

// goCaches is the Go build and module caches of this process, for the
// environment of a gaffer an MCP client starts: a run's commands (go
// test) then build with them rather than from nothing.
func goCaches(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, name := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		env[name] = strings.TrimSpace(string(out))
	}
	return env
}
