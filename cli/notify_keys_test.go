package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/notify"
)

// Canaries of the notify variables' values.
const (
	notifyHookPath   = "/services/T0/B0/notify-keys-canary-91b2e4"
	notifyHookSecret = "hmac-notify-keys-canary-3c7d05"
)

// signedHook is an httptest webhook on 127.0.0.1 at notifyHookPath that
// counts the notices signed with notifyHookSecret, and what it refused.
type signedHook struct {
	srv     *httptest.Server
	mu      sync.Mutex
	signed  []string // the events
	refused []string
}

func newSignedHook(t *testing.T) *signedHook {
	h := &signedHook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.URL.Path != notifyHookPath || r.Header.Get(notify.SignatureHeader) != notify.Sign([]byte(notifyHookSecret), b) {
			h.refused = append(h.refused, r.URL.Path+" "+r.Header.Get(notify.SignatureHeader))
			w.WriteHeader(http.StatusForbidden)
			return
		}
		h.signed = append(h.signed, string(b))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *signedHook) got() (signed, refused []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.signed...), append([]string(nil), h.refused...)
}

// TestNotifyKeysReachNoAgent runs the gaffer binary (whose main gives the
// App a KeyVault) on a mixed profile — the llm driver for the architect
// and reviewer, a CLI agent for the developer — that notifies a webhook
// whose URL (url_env) and HMAC key (secret_env) are in the environment.
// The CLI agent sees neither, unless its pass_env lists them, nor can it
// read them from gaffer's /proc entry; the webhook still gets the run's
// notice at the secret path, signed with the key the vault took.
func TestNotifyKeysReachNoAgent(t *testing.T) {
	bin := gafferBinary(t)
	const keyEnv, key = "GAFFER_LLM_CREDENTIAL", "sk-gaffer-notify-keys-canary-5e2f"
	for _, c := range []struct {
		name    string
		passEnv []string
		want    bool
	}{
		{"not passed", nil, false},
		{"pass_env lists them", []string{"GAFFER_TEST_NOTIFY_URL", "GAFFER_TEST_NOTIFY_SECRET"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &greetModel{}
			srv := fakellm.NewOpenAIFunc(m.respond)
			defer srv.Close()
			hook := newSignedHook(t)
			dump := filepath.Join(t.TempDir(), "env")
			profile := mixedProfile(srv.BaseURL(), keyEnv, devAgent(t, dump, true), c.passEnv) + `    notify:
      targets:
        - webhook: {url_env: GAFFER_TEST_NOTIFY_URL, secret_env: GAFFER_TEST_NOTIFY_SECRET}
`
			dir := greetRepo(t, map[string]string{"gaffer.yaml": profile})
			t.Setenv(keyEnv, key)
			t.Setenv("GAFFER_TEST_NOTIFY_URL", hook.srv.URL+notifyHookPath)
			t.Setenv("GAFFER_TEST_NOTIFY_SECRET", notifyHookSecret)
			t.Setenv("GAFFER_TEST_VISIBLE", "visible-marker-3b9")
			out, code := gafferCmd(t, bin, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			signed, refused := hook.got()
			if len(signed) != 1 || !strings.Contains(signed[0], `"event":"completed"`) || len(refused) > 0 {
				t.Fatalf("the webhook got %q signed and refused %q, want the completed notice once", signed, refused)
			}
			seen := readText(t, dump)
			if !strings.Contains(seen, "visible-marker-3b9") {
				t.Fatalf("the agent's environment dump lacks the control variable:\n%s", seen)
			}
			for _, canary := range []string{"notify-keys-canary-91b2e4", notifyHookSecret} {
				if got := strings.Contains(seen, canary); got != c.want {
					t.Errorf("the CLI agent saw %q: %v, want %v", canary, got, c.want)
				}
				if strings.Contains(out, canary) {
					t.Errorf("gaffer's output shows %q", canary)
				}
			}
			if strings.Contains(seen, key) {
				t.Error("the CLI agent saw the llm's key")
			}
			parent, err := os.ReadFile(dump + ".parent")
			if err != nil || !strings.Contains(string(parent), "visible-marker-3b9") {
				t.Logf("gaffer's /proc environ was not readable by the agent (%v): not checked", err)
				return
			}
			for _, canary := range []string{"notify-keys-canary-91b2e4", notifyHookSecret, key} {
				if strings.Contains(string(parent), canary) {
					t.Errorf("gaffer's /proc environ shows %q", canary)
				}
			}
		})
	}
}

// TestServeNotifiesFromTheVault: gaffer serve takes a run's notify
// variables into its vault when it builds the run's drivers; the next
// run submitted with the same profile is still accepted (serve checks
// url_env in the vault, not its emptied environment) and both runs'
// notices reach the webhook, signed.
func TestServeNotifiesFromTheVault(t *testing.T) {
	t.Parallel()
	hook := newSignedHook(t)
	bin := binWithEnv(t, gafferBinary(t), "GAFFER_TEST_NOTIFY_URL="+hook.srv.URL+notifyHookPath, "GAFFER_TEST_NOTIFY_SECRET="+notifyHookSecret)
	dir, plan, script := demoRepo(t)
	yaml := `profiles:
  default:
    notify:
      events: [completed]
      targets:
        - webhook: {url_env: GAFFER_TEST_NOTIFY_URL, secret_env: GAFFER_TEST_NOTIFY_SECRET}
`
	if err := os.WriteFile(filepath.Join(dir, "gaffer.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, bin, dir)
	for _, id := range []string{"r-20260101-vault1", "r-20260101-vault2"} {
		out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id)
		if code != 0 {
			t.Fatalf("submit %s: exit %d\n%s\nserve:\n%s", id, code, out, s.output())
		}
		waitStatus(t, bin, dir, id, "completed", s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		signed, refused := hook.got()
		if len(refused) > 0 || len(signed) > 2 {
			t.Fatalf("the webhook got %q signed and refused %q", signed, refused)
		}
		if len(signed) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook got %q signed, want both runs' completed notices\nserve:\n%s", signed, s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(s.output(), "notify-keys-canary-91b2e4") || strings.Contains(s.output(), notifyHookSecret) {
		t.Errorf("serve's output shows a notify secret:\n%s", s.output())
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve: exit %d\n%s", code, s.output())
	}
}
