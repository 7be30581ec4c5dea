package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/cliagent/gemini"
	"github.com/gaffer-dev/gaffer/internal/fakegemini"
	"github.com/gaffer-dev/gaffer/internal/npmpin/npmpintest"
)

// These tests run the workflow with the real Gemini CLI (the pinned
// version, installed from npm by npmpintest.ForTest and gemini.Pin) as the
// developer, through the cli driver and the built-in "gemini" template,
// against a scripted Gemini API server on 127.0.0.1 (internal/fakegemini),
// as the Claude Code and Codex tests do with theirs.

// geminiKey is the API key the tests give the Gemini CLI; it must reach no
// output, store, log or commit of gaffer's.
const geminiKey = "gemini-key-canary-5c1d9e"

// geminiEnv installs the Gemini CLI when needed, starts the fake, and
// returns it with the environment of a process that finds the CLI first
// in PATH, has the key and a fresh HOME whose settings take the API key
// (the base URL would otherwise select a gateway login), try each request
// once and send no usage statistics: to pass to a parallel test's gaffer.
func geminiEnv(t *testing.T, respond func(fakegemini.Request) fakegemini.Reply) (*fakegemini.Server, []string) {
	t.Helper()
	bin := npmpintest.ForTest(t, gemini.Pin)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(home, ".gemini", "settings.json"),
		`{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"maxAttempts": 1}, "privacy": {"usageStatisticsEnabled": false}}`)
	srv, err := fakegemini.Start(respond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"GEMINI_API_KEY=" + geminiKey,
	}
}

// geminiProfile runs the developer on the Gemini CLI (the built-in
// template, its base URL pointing at url, started once instead of
// relaunching itself with a larger heap, which saves a quarter of each
// session's time here) and the other roles on the script driver, with
// recovery on (so that a spent Doctor call or replan would show).
func geminiProfile(url string, reviews int) string {
	return `default_profile: gm
profiles:
  gm:
    driver: script
    roles:
      developer: {driver: cli, agent: gemini, model: gemini-2.5-pro}
    agents:
      gemini:
        env:
          GOOGLE_GEMINI_BASE_URL: ` + url + `
          GEMINI_CLI_NO_RELAUNCH: "true"
    limits:
      max_task_review_iterations: ` + strconv.Itoa(reviews) + `
      max_phase_attempts: 2
    recovery: {}
    tdd: false
`
}

// geminiWrite is a Gemini CLI write_file call.
func geminiWrite(path, content string) fakegemini.Reply {
	return fakegemini.Reply{Text: "Writing " + path + ".", Calls: []fakegemini.Call{{Name: "write_file",
		Args: map[string]string{"file_path": path, "content": content}}}}
}

// geminiWrites is the healthy provider's script: a session writes its
// phase's file (the review's retry the empty-name test) and says it is
// done once the tool's response comes back.
func geminiWrites(r fakegemini.Request) fakegemini.Reply {
	last := r.LastText()
	switch {
	case r.HasFunctionResponse():
		return fakegemini.Reply{Text: "Done."}
	case strings.Contains(last, "Review iteration 2"):
		return geminiWrite("greet_empty_test.go", greetEmptyTest)
	case strings.Contains(last, "Execute phase 2 of"):
		return geminiWrite("greet.go", greetImpl)
	case strings.Contains(last, "Execute phase 1 of"):
		return geminiWrite("greet_test.go", greetTest)
	}
	return fakegemini.Reply{Status: 400, ErrorMessage: "the fake cannot place this request"}
}

// geminiKeyHits counts the places the API key shows: the output, any file
// under the repository's .git (gaffer's store, logs and the objects) and
// every commit's patch.
func geminiKeyHits(t *testing.T, dir, out string) int {
	t.Helper()
	hits := strings.Count(out, geminiKey)
	_ = filepath.WalkDir(filepath.Join(dir, ".git"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), geminiKey) {
			t.Errorf("the API key is in %s", path)
			hits++
		}
		return nil
	})
	log, err := exec.Command("git", "-C", dir, "log", "--all", "-p").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, log)
	}
	return hits + strings.Count(string(log), geminiKey)
}

// TestGeminiDeveloperInTheWorkflow: the Gemini CLI writes each task's file
// (real commits with trailers); the reviewer rejects task 1 once and the
// same Gemini session continues with --resume, the fake model seeing the
// whole earlier conversation; the key shows nowhere.
func TestGeminiDeveloperInTheWorkflow(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	srv, env := geminiEnv(t, geminiWrites)
	plan, script := planFiles(t, greetPlan, reviewRejectsOnce)
	dir := greetRepo(t, map[string]string{"gaffer.yaml": geminiProfile(srv.URL, 3)})

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	rev := runRev(t, dir)
	checkGreetTasks(t, dir, rev)
	var retry *fakegemini.Request
	for _, r := range srv.Requests() {
		if strings.Contains(r.LastText(), "Review iteration 2") {
			retry = &r
			break
		}
	}
	if retry == nil {
		t.Fatal("the review retry never reached the model")
	}
	for _, earlier := range []string{"Execute phase 1 of", "functionResponse", "Writing greet_test.go."} {
		if !retry.Contains(earlier) {
			t.Errorf("the retry's request lacks the earlier conversation (%q): the session was not resumed", earlier)
		}
	}
	for _, r := range srv.Requests() {
		if r.APIKey != geminiKey {
			t.Fatalf("a request came without the key: %q", r.APIKey)
		}
	}
	if v := statusJSON(t, "--repo", dir); v.Usage["developer"].InputTokens == 0 {
		t.Errorf("developer usage = %+v, want the Gemini CLI's tokens", v.Usage["developer"])
	}
	if n := geminiKeyHits(t, dir, out); n != 0 {
		t.Errorf("the API key shows %d times", n)
	}
}

// TestGeminiProviderOutageStopsResumably: the Gemini API answers 503; the
// Gemini CLI reports the API's error and exits, and the run stops with
// exit 9 having spent nothing. Once the provider answers, resume finishes
// the run, and the key shows nowhere. (429 and the other statuses are
// classified in agent/cliagent/gemini's TestOutage, on the CLI's own
// output.)
func TestGeminiProviderOutageStopsResumably(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	var status atomic.Int64
	status.Store(503)
	srv, env := geminiEnv(t, func(r fakegemini.Request) fakegemini.Reply {
		if s := status.Load(); s != 0 {
			return fakegemini.Reply{Status: int(s), ErrorMessage: "the provider is down"}
		}
		return geminiWrites(r)
	})
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": geminiProfile(srv.URL, 2)})

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)
	if len(srv.Requests()) == 0 {
		t.Fatal("the Gemini CLI never reached the provider")
	}

	status.Store(0)
	out2, code := gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	if code != 0 {
		t.Fatalf("resume after the outage: exit %d\n%s", code, out2)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Errorf("status %q, phase 1 attempt %d; want completed on the first attempt", v.Status, v.Phases[0].Attempt)
	}
	if n := geminiKeyHits(t, dir, out+out2); n != 0 {
		t.Errorf("the API key shows %d times", n)
	}
}
