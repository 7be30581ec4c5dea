package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
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

const notifySecret = "hook-secret-5f1c0e"

// hooks are the httptest receivers of the notify tests: a webhook that
// verifies the HMAC and an ntfy topic.
type hooks struct {
	mu    sync.Mutex
	keys  []string // the webhook's idempotency keys, in order
	bad   []string // what failed the check
	ntfy  []string // ntfy's titles
	hook  *httptest.Server
	topic *httptest.Server
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{}
	h.hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		var m notify.Message
		switch {
		case r.Header.Get(notify.SignatureHeader) != notify.Sign([]byte(notifySecret), b):
			h.bad = append(h.bad, "signature: "+string(b))
		case json.Unmarshal(b, &m) != nil || m.Key != r.Header.Get("Idempotency-Key") || m.URL != "http://inbox.test/runs/"+m.Run:
			h.bad = append(h.bad, "message: "+string(b))
		default:
			h.keys = append(h.keys, m.Key+" "+m.Event)
		}
	}))
	h.topic = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.ntfy = append(h.ntfy, r.Header.Get("Title")+" "+r.Header.Get("Click"))
	}))
	t.Cleanup(h.hook.Close)
	t.Cleanup(h.topic.Close)
	return h
}

func (h *hooks) got() (keys, bad, ntfy []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.keys), slices.Clone(h.bad), slices.Clone(h.ntfy)
}

// notifyRepo is the demo repository with a gaffer.yaml notifying h and a
// command that appends its environment to the returned file.
func notifyRepo(t *testing.T, h *hooks) (dir, plan, script, cmdOut string) {
	dir, plan, script = demoRepo(t)
	cmdOut = filepath.Join(t.TempDir(), "command.out")
	yaml := fmt.Sprintf(`profiles:
  default:
    notify:
      url: http://inbox.test
      targets:
        - webhook: {url: %s/hook, secret_env: GAFFER_TEST_HOOK_SECRET}
        - ntfy: {url: %s/gaffer-topic, priority: high}
        - command:
            run: [sh, -c, 'echo "$GAFFER_EVENT $GAFFER_RUN $GAFFER_URL" >> %s']
`, h.hook.URL, h.topic.URL, cmdOut)
	if err := os.WriteFile(filepath.Join(dir, "gaffer.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, plan, script, cmdOut
}

// runKilledBeforeNotice runs the plan as run id with env, paused before
// it delivers its awaiting_approval notice, SIGKILLs it there (the notice
// checkpointed, not delivered) and returns its output.
func runKilledBeforeNotice(t *testing.T, bin string, env []string, dir, plan, script, id string) string {
	t.Helper()
	p := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", id}, append(env, "GAFFER_TEST_PAUSE_BEFORE_NOTIFY=30s")...)
	waitOutput(t, p, "gaffer-test: notify "+id+" awaiting_approval")
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out, _ := p.wait()
	return out
}

// TestNotifyAcrossKill: a run's awaiting_approval notice is checkpointed
// with the plan; the process is SIGKILLed before it delivers it, and the
// next gaffer process on the store (resume) does. Then approve completes
// the run and its notice is delivered. Each key reaches the receivers
// exactly once, signed; the command target sees its variables; no
// secret is in the store, the cursors or the output.
func TestNotifyAcrossKill(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	env := []string{"GAFFER_TEST_HOOK_SECRET=" + notifySecret}
	h := newHooks(t)
	dir, plan, script, cmdOut := notifyRepo(t, h)
	const id = "r-20260101-notify"

	out := runKilledBeforeNotice(t, bin, env, dir, plan, script, id)
	if keys, _, _ := h.got(); len(keys) != 0 {
		t.Fatalf("delivered before the kill: %v", keys)
	}

	out2, code := startProc(t, bin, []string{"--repo", dir, "resume"}, env...).wait()
	if code != ExitAwaitingApproval {
		t.Fatalf("resume: exit %d\n%s", code, out2)
	}
	if keys, _, _ := h.got(); !slices.Equal(keys, []string{id + ":1 awaiting_approval"}) {
		t.Fatalf("after resume the webhook got %v", keys)
	}
	out3, code := startProc(t, bin, []string{"--repo", dir, "approve"}, env...).wait()
	if code != 0 {
		t.Fatalf("approve: exit %d\n%s", code, out3)
	}
	keys, bad, ntfy := h.got()
	if want := []string{id + ":1 awaiting_approval", id + ":2 completed"}; !slices.Equal(keys, want) || len(bad) > 0 {
		t.Fatalf("webhook got %v (refused %v), want %v", keys, bad, want)
	}
	if len(ntfy) != 2 || !strings.HasSuffix(ntfy[0], " http://inbox.test/runs/"+id) {
		t.Fatalf("ntfy got %q", ntfy)
	}
	b, err := os.ReadFile(cmdOut)
	if want := fmt.Sprintf("awaiting_approval %[1]s http://inbox.test/runs/%[1]s\ncompleted %[1]s http://inbox.test/runs/%[1]s\n", id); err != nil || string(b) != want {
		t.Fatalf("command wrote %q (%v), want %q", b, err, want)
	}
	store := filepath.Join(dir, ".git", "gaffer")
	noSecretIn(t, out+out2+out3, store, store+".notify.json", store+".logs")
}

// TestNotifyAutoApproved: with auto-approve nothing waits for approval;
// the completed notice is delivered once.
func TestNotifyAutoApproved(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	env := []string{"GAFFER_TEST_HOOK_SECRET=" + notifySecret}
	h := newHooks(t)
	dir, plan, script, _ := notifyRepo(t, h)
	const id = "r-20260101-notify"
	out, code := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", id, "--auto-approve"}, env...).wait()
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	keys, bad, _ := h.got()
	if !slices.Equal(keys, []string{id + ":1 completed"}) || len(bad) > 0 {
		t.Fatalf("webhook got %v (refused %v)", keys, bad)
	}
}

// noSecretIn fails when the webhook's secret is in out or any file under
// paths.
func noSecretIn(t *testing.T, out string, paths ...string) {
	t.Helper()
	if strings.Contains(out, notifySecret) {
		t.Fatal("the secret is in the output")
	}
	for _, root := range paths {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(path)
			if err == nil && strings.Contains(string(b), notifySecret) {
				t.Errorf("the secret is in %s", path)
			}
			return nil
		})
	}
}
