package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/cliagent/codex"
	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/fakeresponses"
	"github.com/gaffer-dev/gaffer/internal/npmpin/npmpintest"
)

// These tests take the model provider down under a real CLI agent — the
// pinned Codex against a scripted OpenAI Responses server, the pinned
// Claude Code against a scripted Anthropic server — and check that the
// outage is the machine's fault: the run stops resumably (exit 9) with no
// attempt, no review, no Doctor call and no replan spent, and `resume`
// finishes it once the provider answers again.

// codexServer starts a fake Responses API server answering with respond
// (closed when the test ends) and returns it with codexEnv's environment
// for it, as claudeEnv does for Claude Code.
func codexServer(t *testing.T, respond func(fakeresponses.Request) fakeresponses.Reply) (*fakeresponses.Server, []string) {
	t.Helper()
	srv, err := fakeresponses.Start(respond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, codexEnv(t, srv)
}

// codexEnv installs Codex when needed and returns the environment of a
// process that finds it first in PATH, has a fresh HOME whose config
// points Codex at srv, and the key: to pass to the processes of a
// parallel test.
func codexEnv(t *testing.T, srv *fakeresponses.Server) []string {
	t.Helper()
	bin := npmpintest.ForTest(t, codex.Pin)
	home := t.TempDir()
	cfg := `model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "` + srv.URL + `"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 0
`
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(home, ".codex", "config.toml"), cfg)
	return []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"OPENAI_API_KEY=sk-codex-outage-test",
	}
}

// codexProfile runs the developer on Codex and the other roles on the
// script driver, with recovery on (so that a spent Doctor call or replan
// would show).
const codexProfile = `default_profile: cx
profiles:
  cx:
    driver: script
    roles:
      developer: {driver: cli, agent: codex, model: gpt-5-codex}
    limits:
      max_task_review_iterations: 2
      max_phase_attempts: 2
    recovery: {}
    tdd: false
`

// codexWrites is the healthy provider's script: a fresh session writes
// its phase's file through exec_command, and says it is done once the
// command's output comes back.
func codexWrites(r fakeresponses.Request) fakeresponses.Reply {
	write := func(name, content string) fakeresponses.Reply {
		return fakeresponses.Reply{Text: "Writing " + name + ".", Calls: []fakeresponses.Call{{Name: "exec_command",
			Arguments: map[string]string{"cmd": "cat > " + name + " <<'EOF'\n" + content + "EOF\n"}}}}
	}
	switch {
	case r.HasCallOutput():
		return fakeresponses.Reply{Text: "Done."}
	case r.Contains("Execute phase 2 of"):
		return write("greet.go", greetImpl)
	case r.Contains("Execute phase 1 of"):
		return write("greet_test.go", greetTest)
	}
	return fakeresponses.Reply{Status: 400, ErrorMessage: "the fake cannot place this request"}
}

// checkStoppedByOutage checks that a run stopped by its provider's outage
// is running (stopped), with phase 1 on its first attempt, unreviewed,
// and recovery untouched.
func checkStoppedByOutage(t *testing.T, dir, out string, code int) {
	t.Helper()
	if code != ExitStopped {
		t.Fatalf("run: exit %d, want %d (stopped resumably)\n%s", code, ExitStopped, out)
	}
	if !strings.Contains(out, "model provider") || !strings.Contains(out, "no attempt counted") || strings.Contains(out, "review of phase") {
		t.Errorf("run's output should say the provider stopped it and show no review:\n%s", out)
	}
	v := statusJSON(t, "--repo", dir)
	if v.Status != "running" || !v.Stopped {
		t.Fatalf("status %q stopped=%v, want running (stopped)", v.Status, v.Stopped)
	}
	if len(v.Phases) == 0 || v.Phases[0].Attempt != 1 || v.Phases[0].Review != nil {
		t.Fatalf("phase 1 = %+v, want attempt 1 with no review", v.Phases)
	}
	if r := v.Recovery; r != nil && (r.DoctorCalls != 0 || r.Replans != 0 || r.ReplansReserved != 0 || r.Decisions != 0) {
		t.Fatalf("recovery spent on an outage: %+v", *r)
	}
	for _, e := range v.Errors {
		if strings.Contains(e, "halted") || strings.Contains(e, "review") {
			t.Errorf("error %q: no review ran and nothing halted", e)
		}
	}
}

// TestCodexProviderOutageStopsResumably: every Responses request answers
// 500; Codex gives up and exits 1. The run stops with exit 9, having spent
// nothing, and resumes to the end once the provider answers.
func TestCodexProviderOutageStopsResumably(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	srv, env := codexServer(t, func(fakeresponses.Request) fakeresponses.Reply {
		return fakeresponses.Reply{Status: 500, ErrorMessage: "the provider is down"}
	})
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": codexProfile})

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)
	if n := len(srv.Requests()); n == 0 {
		t.Fatal("Codex never reached the provider")
	}
	if strings.Contains(out, "sk-codex-outage-test") {
		t.Error("the API key is in the output")
	}

	srv.SetRespond(codexWrites)
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	if code != 0 {
		t.Fatalf("resume after the outage: exit %d\n%s", code, out)
	}
	rev := runRev(t, dir)
	if got := gitOut(t, dir, "show", rev+"~1:greet.go"); got != strings.TrimSpace(greetImpl) {
		t.Errorf("phase 2's greet.go =\n%s", got)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Errorf("status %q, phase 1 attempt %d; want completed on the first attempt", v.Status, v.Phases[0].Attempt)
	}
}

// TestClaudeCodeProviderOutageStopsResumably: the Anthropic server answers
// 529 (overloaded), then 500; each time Claude Code reports is_error with
// the API's status, and the run stops with exit 9 having spent nothing.
// Once the provider answers, resume finishes the run.
func TestClaudeCodeProviderOutageStopsResumably(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	var status atomic.Int64
	status.Store(529)
	srv, env := claudeEnv(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		if s := status.Load(); s != 0 {
			return fakeanthropic.Reply{Status: int(s), ErrorType: "overloaded_error", ErrorMessage: "the provider is down"}
		}
		return claudeWrites(r)
	})
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": strings.Replace(claudeProfile(srv.URL, 2, 2), "    tdd: false\n", "    recovery: {}\n    tdd: false\n", 1)})

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)

	status.Store(500)
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	checkStoppedByOutage(t, dir, out, code)

	status.Store(0)
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	if code != 0 {
		t.Fatalf("resume after the outage: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Errorf("status %q, phase 1 attempt %d; want completed on the first attempt", v.Status, v.Phases[0].Attempt)
	}
}
