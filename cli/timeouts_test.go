package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/internal/fakeresponses"
	"github.com/gaffer-dev/gaffer/profile/config/configtest"
)

// These tests hang the model provider — it accepts each request and never
// answers — under the real gaffer binary, with small timeouts in
// gaffer.yaml, and check that the run stops resumably (exit 9) once the
// limit is reached, having spent no attempt, review, Doctor call or
// replan, and that `resume` finishes it once the provider answers.

// hungLLMRepo makes a greet repository whose llm profile gives the
// developer timeouts (a YAML flow mapping) and whose fake provider never
// answers the developer while hang holds. It returns the repository, the
// count of the developer's calls left hanging, and the environment that
// holds the provider's key.
func hungLLMRepo(t *testing.T, hang *atomic.Bool, timeouts string) (dir string, hung *atomic.Int32, env []string) {
	t.Helper()
	m := &greetModel{}
	hung = new(atomic.Int32)
	srv := fakellm.NewOpenAIFunc(func(r fakellm.Request) fakellm.Turn {
		if hang.Load() && strings.Contains(r.System, "developer agent") {
			hung.Add(1)
			return fakellm.Turn{Hang: true}
		}
		return m.respond(r)
	})
	t.Cleanup(srv.Close)
	profile := strings.Replace(llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_OPENAI_KEY"), "    tdd: false\n",
		"    recovery: {}\n    tdd: false\n    roles:\n      developer: {timeouts: "+timeouts+"}\n", 1)
	dir = greetRepo(t, map[string]string{"gaffer.yaml": profile})
	return dir, hung, []string{"GAFFER_TEST_OPENAI_KEY=sk-test-openai"}
}

// TestLLMHungProviderStopsResumably: the llm developer's model calls time
// out after timeouts.call (1s) and are tried timeouts.call_attempts (2)
// times; then the run stops with exit 9.
func TestLLMHungProviderStopsResumably(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	var hang atomic.Bool
	hang.Store(true)
	dir, hung, env := hungLLMRepo(t, &hang, "{call: 1s, call_attempts: 2}")

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)
	if n := hung.Load(); n != 2 {
		t.Errorf("the developer's call was tried %d times, want timeouts.call_attempts: 2", n)
	}
	if !strings.Contains(out, "call timeout of 1s") {
		t.Errorf("the output does not name the call timeout:\n%s", out)
	}

	hang.Store(false)
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	if v := checkGreetRun(t, dir); v.Phases[0].Attempt != 1 {
		t.Errorf("phase 1 attempt %d, want the first", v.Phases[0].Attempt)
	}
}

// TestCodexSessionLimitStopsResumably: Codex, the developer, waits on a
// provider that never answers until its session limit (timeouts.session,
// 60s: long enough for Codex to start and reach the provider on a loaded
// machine, beside the parallel tests) is reached. gaffer kills its whole process group — no process of it
// survives — and the run stops with exit 9.
func TestCodexSessionLimitStopsResumably(t *testing.T) {
	t.Parallel()
	needLinuxProc(t)
	bin := gafferBinary(t)
	var hang atomic.Bool
	hang.Store(true)
	var home atomic.Value // HOME=…, once codexEnv has made it
	home.Store("")
	var seen atomic.Int32 // the session's processes seen while it hung
	srv, err := fakeresponses.Start(func(r fakeresponses.Request) fakeresponses.Reply {
		if hang.Load() {
			if kv := home.Load().(string); kv != "" && seen.Load() == 0 {
				seen.Store(int32(len(scanEnv(t, kv))))
			}
			return fakeresponses.Reply{Hang: true}
		}
		return codexWrites(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	env := codexEnv(t, srv)
	home.Store("HOME=" + envValue(env, "HOME"))
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	profile := strings.Replace(codexProfile, "developer: {driver: cli, agent: codex, model: gpt-5-codex}",
		"developer: {driver: cli, agent: codex, model: gpt-5-codex, timeouts: {session: 60s}}", 1)
	dir := greetRepo(t, map[string]string{"gaffer.yaml": profile})

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)
	if len(srv.Requests()) == 0 {
		t.Fatal("Codex never reached the provider")
	}
	if !strings.Contains(out, "session limit of 1m0s") {
		t.Errorf("the output does not name the session limit:\n%s", out)
	}
	if seen.Load() == 0 {
		t.Fatal("no process of the Codex session was seen while it ran: the check below cannot fail")
	}
	if left := processesWithEnv(t, home.Load().(string)); len(left) > 0 {
		t.Fatalf("processes of the Codex session survived it: %v", left)
	}

	hang.Store(false)
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	if code != 0 {
		t.Fatalf("resume after the hang: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Errorf("status %q, phase 1 attempt %d; want completed on the first attempt", v.Status, v.Phases[0].Attempt)
	}
}

func needLinuxProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("checks processes through /proc")
	}
}

// processesWithEnv returns "PID CMDLINE" of each live process, other than
// this one, whose environment holds kv, after giving killed ones up to
// 10s to go.
func processesWithEnv(t *testing.T, kv string) []string {
	t.Helper()
	var found []string
	for range 100 {
		if found = scanEnv(t, kv); len(found) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return found
}

// scanEnv returns "PID CMDLINE" of each live process, other than this
// one, whose environment holds kv.
func scanEnv(t *testing.T, kv string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Error(err)
		return nil
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains("\x00"+string(env)+"\x00", "\x00"+kv+"\x00") {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue // a zombie: dead, not yet reaped
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return found
}

// TestConfigShowTimeouts: config show prints each role's timeouts as it
// takes them, and a bad duration is refused with exit 3 in one line
// naming the key, by config show and by run alike.
func TestConfigShowTimeouts(t *testing.T) {
	dir := configtest.Dir(t, `profiles:
  default:
    driver: cli
    agent: codex
    timeouts: {session: 45m}
    roles:
      architect: {driver: llm, model: gpt-5, timeouts: {call: 90s, call_attempts: 2}}
    provider: {name: openai}
`)
	out, code := gaffer(t, "--repo", dir, "config", "show")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"    model: gpt-5\n    agent: codex\n    timeouts:\n      call: 90s\n      call_attempts: 2\n      session: 45m\n",
		"  developer:\n    driver: cli\n    agent: codex\n    timeouts:\n      call: 5m\n      call_attempts: 4\n      session: 45m\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config show lacks\n%s\nin:\n%s", want, out)
		}
	}
	dir = configtest.Dir(t, "profiles:\n  default:\n    roles:\n      developer: {timeouts: {session: 0s}}\n")
	for _, args := range [][]string{{"config", "show"}, {"run", "--goal", "x"}} {
		out, code := gaffer(t, append([]string{"--repo", dir}, args...)...)
		want := `gaffer.yaml:4: roles.developer.timeouts.session must be above 0, got "0s"; give a duration such as 60m, or leave it out for the default`
		if code != ExitInvalid || !strings.Contains(out, want) || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("%v: exit %d, want %d with one line\n%s", args, code, ExitInvalid, out)
		}
	}
}

// TestClaudeCodeSessionLimitWhoseFault: the real Claude Code as the
// developer, with a session limit of 60s (long enough for the CLI to
// start and reach the provider on a loaded machine, beside
// the parallel tests). While it waits on a provider
// that never answers, reaching the limit stops the run with exit 9 and
// resume finishes it. While its own Bash command hangs (tail -f /dev/null),
// reaching the limit is its failed attempt, counted as such. Either way no
// process of the session — the command's tail included — survives.
func TestClaudeCodeSessionLimitWhoseFault(t *testing.T) {
	t.Parallel()
	needLinuxProc(t)
	bin := gafferBinary(t)
	var mode atomic.Int32 // 0 answers, 1 hangs, 2 runs a command that hangs
	mode.Store(1)
	var home atomic.Value // HOME=…, once claudeEnv has made it
	home.Store("")
	var seen atomic.Int32
	srv, env := claudeEnv(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		switch m := mode.Load(); {
		case m == 1:
			if kv := home.Load().(string); kv != "" && seen.Load() == 0 {
				seen.Store(int32(len(scanEnv(t, kv))))
			}
			return fakeanthropic.Reply{Hang: true}
		case m == 2 && !r.HasToolResult():
			return fakeanthropic.Reply{Text: "Running the tests.", ToolUses: []fakeanthropic.ToolUse{{Name: "Bash",
				Input: map[string]any{"command": "tail -f /dev/null", "timeout": 600000}}}}
		}
		return claudeWrites(r)
	})
	home.Store("HOME=" + envValue(env, "HOME"))
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	profile := strings.Replace(claudeProfile(srv.URL, 2, 1), "model: claude-sonnet-4-5}", "model: claude-sonnet-4-5, timeouts: {session: 60s}}", 1)
	if !strings.Contains(profile, "session: 60s") {
		t.Fatal("the profile has no session limit")
	}

	// The provider hangs: exit 9, nothing spent, nothing left running.
	dir := greetRepo(t, map[string]string{"gaffer.yaml": strings.Replace(profile, "    tdd: false\n", "    recovery: {}\n    tdd: false\n", 1)})
	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)
	if !strings.Contains(out, "session limit of 1m0s") {
		t.Errorf("the output does not name the session limit:\n%s", out)
	}
	if seen.Load() == 0 {
		t.Fatal("no process of the Claude Code session was seen while it ran: the check below cannot fail")
	}
	if left := processesWithEnv(t, home.Load().(string)); len(left) > 0 {
		t.Fatalf("processes of the Claude Code session survived it: %v", left)
	}
	mode.Store(0)
	if out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume"); code != 0 {
		t.Fatalf("resume after the hang: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Errorf("status %q, phase 1 attempt %d; want completed on the first attempt", v.Status, v.Phases[0].Attempt)
	}

	// Its command hangs: the agent's failed attempt (one allowed), and the
	// command's tail dies with the session.
	mode.Store(2)
	dir = greetRepo(t, map[string]string{"gaffer.yaml": profile})
	stop, watched := make(chan struct{}), make(chan bool)
	go func() { // watch for the hung command while the run goes on
		saw := false
		for {
			for _, p := range scanEnv(t, home.Load().(string)) {
				saw = saw || strings.Contains(p, "tail -f /dev/null")
			}
			select {
			case <-stop:
				watched <- saw
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	close(stop)
	if !<-watched {
		t.Fatalf("the agent's command (tail -f /dev/null) was never seen running: the check below cannot fail\n%s", out)
	}
	if code != ExitHalted || strings.Contains(out, "no attempt counted") {
		t.Fatalf("run: exit %d, want %d: a hung command of the agent's is its failed attempt (one allowed), not an outage\n%s", code, ExitHalted, out)
	}
	if !strings.Contains(out, "session limit of 1m0s while running Bash") {
		t.Errorf("the output does not say the session limit was reached in a command:\n%s", out)
	}
	if left := processesWithEnv(t, home.Load().(string)); len(left) > 0 {
		t.Fatalf("processes of the Claude Code session survived it: %v", left)
	}
}
