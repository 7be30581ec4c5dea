package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/notify"
)

// hookPath is a webhook URL's path that is its secret, as a Slack
// incoming webhook's is.
const hookPath = "/services/T0/B0/urlenv-canary-3f9a1"

// urlEnvRepo is the demo repository with a gaffer.yaml whose webhook and
// ntfy targets take their URLs from GAFFER_TEST_HOOK_URL and
// GAFFER_TEST_TOPIC_URL.
func urlEnvRepo(t *testing.T) (dir, plan, script string) {
	dir, plan, script = demoRepo(t)
	yaml := `profiles:
  default:
    notify:
      targets:
        - webhook: {url_env: GAFFER_TEST_HOOK_URL, format: slack}
        - ntfy: {url_env: GAFFER_TEST_TOPIC_URL}
`
	if err := os.WriteFile(filepath.Join(dir, "gaffer.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, plan, script
}

// TestNotifyURLEnvKeepsTheURLOutOfTheStore: the webhook's URL, whose path
// is its secret, is read from the environment when the notice is
// delivered; no checkpoint of the store (decoded), no file beside it and
// no output holds it, while the checkpoints do hold the variable's name.
func TestNotifyURLEnvKeepsTheURLOutOfTheStore(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.URL.Path)
	}))
	defer srv.Close()
	env := map[string]string{"GAFFER_TEST_HOOK_URL": srv.URL + hookPath, "GAFFER_TEST_TOPIC_URL": srv.URL + "/urlenv-topic-canary"}
	dir, plan, script := urlEnvRepo(t)

	out, code := gafferEnv(t, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	mu.Lock()
	if !slices.Equal(got, []string{hookPath, "/urlenv-topic-canary"}) && !slices.Equal(got, []string{"/urlenv-topic-canary", hookPath}) {
		t.Fatalf("the receiver got %q", got)
	}
	mu.Unlock()

	storeDir := filepath.Join(dir, ".git", "gaffer")
	decoded := decodedCheckpoints(t, storeDir)
	if !strings.Contains(decoded, "GAFFER_TEST_HOOK_URL") {
		t.Fatal("the checkpoints lack the variable's name: the search saw nothing")
	}
	for _, secret := range []string{"urlenv-canary", "urlenv-topic-canary"} {
		if strings.Contains(decoded, secret) || strings.Contains(out, secret) {
			t.Errorf("%q is in the checkpoints or the output", secret)
		}
	}
	for _, p := range []string{dir, notify.CursorFile(storeDir)} { // the work tree, .git (the store, its logs, the execution directory) and the cursors
		_ = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), "urlenv-canary") {
				t.Errorf("the URL is in %s", path)
			}
			return nil
		})
	}
}

// TestRunRefusesAnUnsetURLEnv: a url_env variable that is unset stops
// run before it writes anything, as a missing API key does: exit 8, one
// line naming the variable and the fix.
func TestRunRefusesAnUnsetURLEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GAFFER_TEST_HOOK_URL": "", "GAFFER_TEST_TOPIC_URL": "http://127.0.0.1:9/topic"}
	dir, plan, script := urlEnvRepo(t)
	out, code := gafferEnv(t, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	want := "notify target 1 (webhook): set the environment variable GAFFER_TEST_HOOK_URL to its URL (url_env, profile default)"
	if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d, want %d and one line with %q:\n%s", code, ExitPrecondition, want, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !os.IsNotExist(err) {
		t.Errorf("the store was created: %v", err)
	}
	env["GAFFER_TEST_HOOK_URL"] = "hooks.slack.com/services/x"
	if out, code := gafferEnv(t, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != ExitPrecondition ||
		!strings.Contains(out, "GAFFER_TEST_HOOK_URL must hold an http or https URL") || strings.Contains(out, "services/x") {
		t.Fatalf("a variable without a URL: exit %d\n%s", code, out)
	}
}

// TestSubmitRefusesAnUnsetURLEnv: serve, which delivers the notices of the
// runs it executes, refuses a submitted run whose url_env variable it
// lacks, and submit reports it as run does.
func TestSubmitRefusesAnUnsetURLEnv(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	env := []string{"GAFFER_TEST_HOOK_URL=", "GAFFER_TEST_TOPIC_URL=http://127.0.0.1:9/topic"}
	dir, plan, script := urlEnvRepo(t)
	s := startServeEnv(t, bin, dir, env)
	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "submit", "--plan", plan, "--script", script, "--auto-approve")
	want := "notify target 1 (webhook): set the environment variable GAFFER_TEST_HOOK_URL to its URL (url_env, profile default)"
	if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, want) {
		t.Fatalf("submit: exit %d, want %d and one line with %q:\n%s", code, ExitPrecondition, want, out)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve: exit %d\n%s", code, s.output())
	}
}
