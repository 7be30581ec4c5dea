package notify

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/state"
)

// secretPath is a URL path that is a secret, as a Slack webhook's is.
const secretPath = "/services/T0/B0/url-canary-91d3c"

// envOf is a Getenv holding vars.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// A webhook's and an ntfy topic's URL come from the variables their
// url_env names, read at delivery from a real server on 127.0.0.1; the
// state and the cursors hold the names only.
func TestURLEnvDelivers(t *testing.T) {
	hook, topic := newReceiver(t), newReceiver(t)
	if u, _ := url.Parse(hook.URL); u.Hostname() != "127.0.0.1" {
		t.Fatalf("the receiver listens on %s", u.Host)
	}
	var mu sync.Mutex
	var paths []string
	record := hook.Config.Handler
	hook.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		record.ServeHTTP(w, r)
	})
	s := runState(2, state.NotifyTarget{Kind: KindWebhook, URLEnv: "GAFFER_HOOK_URL", SecretEnv: "HOOK_SECRET"},
		state.NotifyTarget{Kind: KindNtfy, URLEnv: "GAFFER_TOPIC_URL"})
	cursor := filepath.Join(t.TempDir(), "store.notify.json")
	d := start(t, cursor, func() state.ExecutionState { return s }, func(c *Config) {
		c.Getenv = envOf(map[string]string{"GAFFER_HOOK_URL": hook.URL + secretPath, "GAFFER_TOPIC_URL": " " + topic.URL + "/topic\n", "HOOK_SECRET": "s3cret"})
	})
	d.Close()
	if b, h := hook.got(); len(b) != 2 || h[0].Get(SignatureHeader) != Sign([]byte("s3cret"), []byte(b[0])) {
		t.Fatalf("webhook got %q", b)
	}
	mu.Lock()
	if len(paths) != 2 || paths[0] != secretPath {
		t.Fatalf("webhook posted to %q, want %s", paths, secretPath)
	}
	mu.Unlock()
	if b, _ := topic.got(); len(b) != 2 {
		t.Fatalf("ntfy got %q", b)
	}
}

// An unset url_env variable is a failed delivery like any other: retried,
// then dropped with one log line naming the variable.
func TestURLEnvUnsetIsAFailedDelivery(t *testing.T) {
	s := runState(1, state.NotifyTarget{Kind: KindWebhook, URLEnv: "GAFFER_HOOK_URL"})
	var logs strings.Builder
	var mu sync.Mutex
	var tries int
	d := start(t, filepath.Join(t.TempDir(), "c.json"), func() state.ExecutionState { return s }, func(c *Config) {
		c.Attempts = 3
		c.Logger = slogTo(&logs, &mu)
		c.Getenv = func(k string) string {
			mu.Lock()
			if k == "GAFFER_HOOK_URL" {
				tries++
			}
			mu.Unlock()
			return ""
		}
	})
	d.Close()
	mu.Lock()
	defer mu.Unlock()
	if tries != 3 {
		t.Fatalf("the variable was read %d times, want once per attempt (3)", tries)
	}
	const want = "notify: webhook URL: environment variable GAFFER_HOOK_URL is not set"
	if n := strings.Count(logs.String(), "notice dropped"); n != 1 || !strings.Contains(logs.String(), want) {
		t.Fatalf("logs lack one drop line with %q:\n%s", want, logs.String())
	}
}

// A failed delivery's error, and so every log line, shows the target's
// scheme and host only: net/http's errors quote the whole URL, whose path
// (or query, or credentials) is the secret.
func TestDeliveryErrorsHideTheURL(t *testing.T) {
	failing := newReceiver(t)
	failing.fail = 1000
	closed := newReceiver(t)
	closed.Close() // connection refused: a *url.Error
	redirecting := newReceiver(t)
	redirecting.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.String(), http.StatusFound) // loops: "stopped after 10 redirects"
	})
	for name, base := range map[string]string{"status": failing.URL, "refused": closed.URL, "redirects": redirecting.URL} {
		t.Run(name, func(t *testing.T) {
			target := base + secretPath + "?token=tok-canary-77"
			target = strings.Replace(target, "http://", "http://bot:pw-canary-55@", 1)
			for _, tg := range []state.NotifyTarget{
				{Kind: KindWebhook, URLEnv: "GAFFER_HOOK_URL"},
				{Kind: KindNtfy, URLEnv: "GAFFER_HOOK_URL"},
				{Kind: KindWebhook, URL: target},
			} {
				var logs strings.Builder
				var mu sync.Mutex
				s := runState(1, tg)
				d := start(t, filepath.Join(t.TempDir(), "c.json"), func() state.ExecutionState { return s }, func(c *Config) {
					c.Attempts = 2
					c.Logger = slogTo(&logs, &mu)
					c.Getenv = envOf(map[string]string{"GAFFER_HOOK_URL": target})
				})
				d.Close()
				mu.Lock()
				out := logs.String()
				mu.Unlock()
				if !strings.Contains(out, "notice dropped") || !strings.Contains(out, strings.TrimPrefix(base, "http://")) {
					t.Fatalf("%s: no drop line naming the host:\n%s", tg.Kind, out)
				}
				for _, secret := range []string{"url-canary", "tok-canary", "pw-canary", "services/T0"} {
					if strings.Contains(out, secret) {
						t.Errorf("%s via %q: the logs show %q:\n%s", tg.Kind, tg.URLEnv, secret, out)
					}
				}
			}
		})
	}
}

// Client errors, redacted, still unwrap to what net/http returned.
func TestRedactedErrorsUnwrap(t *testing.T) {
	d := &Deliverer{ctx: context.Background(), cfg: Config{Client: &http.Client{Timeout: time.Second}}}
	closed := newReceiver(t)
	closed.Close()
	req, err := d.request(state.NotifyTarget{Kind: KindWebhook, URL: closed.URL + secretPath}, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	err = d.do(req)
	var ue *url.Error
	if !errors.As(err, &ue) || strings.Contains(err.Error(), secretPath) || !strings.Contains(err.Error(), closed.URL+"/…") {
		t.Fatalf("error %v (url.Error %v)", err, ue)
	}
	if got := Redact("https://u:p@hooks.slack.com/services/X?token=1"); got != "https://hooks.slack.com/…" {
		t.Fatalf("Redact = %q", got)
	}
	if got := Redact("http://127.0.0.1:9/"); got != "http://127.0.0.1:9" {
		t.Fatalf("Redact = %q", got)
	}
}
