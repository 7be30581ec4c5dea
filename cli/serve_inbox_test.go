package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/internal/browsertest"
	"github.com/gaffer-dev/gaffer/profile"
)

var inboxBanner = regexp.MustCompile(`gaffer serve: inbox (http://[0-9.:]+/)`)

// startInbox starts serve with the inbox on a free loopback port, submits
// the demo without auto-approve and waits until it awaits approval. It
// returns the server, the inbox's URL and the run.
func startInbox(t *testing.T, runID string, args ...string) (s *server, bin, dir, base string) {
	t.Helper()
	bin = gafferBinary(t)
	dir, _, script := demoRepo(t)
	s = startServe(t, bin, dir, append([]string{"--ui-addr", "127.0.0.1:0"}, args...)...)
	if !waitFor(func() bool { return inboxBanner.MatchString(s.output()) }) {
		t.Fatalf("serve names no inbox:\n%s", s.output())
	}
	base = inboxBanner.FindStringSubmatch(s.output())[1]
	out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script, "--run-id", runID)
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, runID, "awaiting_approval", s)
	return s, bin, dir, base
}

func TestServeInboxNeedsTokenOffLoopback(t *testing.T) {
	bin := gafferBinary(t)
	dir, _, _ := demoRepo(t)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0"} {
		out, code := gafferCmd(t, bin, "--repo", dir, "serve", "--metrics-addr", "127.0.0.1:0", "--ui-addr", addr)
		if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "--ui-token-file") {
			t.Errorf("serve --ui-addr %s without a token: exit %d, want 8 and one line naming --ui-token-file:\n%s", addr, code, out)
		}
	}
	empty := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := gafferCmd(t, bin, "--repo", dir, "serve", "--metrics-addr", "127.0.0.1:0", "--ui-addr", "0.0.0.0:0", "--ui-token-file", empty)
	if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("serve with an empty token file: exit %d, want 8 and one line:\n%s", code, out)
	}
}

// TestServeInboxApprove is the inbox's e2e: the demo runs in a real serve
// without auto-approve; a real HTTP client with a cookie jar loads the
// run's page, takes its CSRF token, posts Approve, and the run completes.
func TestServeInboxApprove(t *testing.T) {
	t.Parallel()
	const runID = "r-20260101-inbox1"
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("inbox-e2e-token-5d1c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, bin, dir, base := startInbox(t, runID, "--ui-token-file", token)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	page := func(path string) (int, string) {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := page("runs/" + runID); code != http.StatusUnauthorized {
		t.Fatalf("the run page without the token: %d, want 401", code)
	}
	code, body := page("runs/" + runID + "?token=inbox-e2e-token-5d1c")
	if code != http.StatusOK || !strings.Contains(body, "Approve the plan?") {
		t.Fatalf("the run page: %d\n%s", code, body)
	}
	_, list := page("")
	if !strings.Contains(list, runID) || !strings.Contains(list, "Waiting for plan approval") {
		t.Errorf("the list does not show the run waiting:\n%s", list)
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	resp, err := c.PostForm(base+"runs/"+runID+"/answer", url.Values{"action": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("approve without the CSRF token: %d, want 403", resp.StatusCode)
	}
	resp, err = c.PostForm(base+"runs/"+runID+"/answer", url.Values{"action": {"approve"}, "csrf": {m[1]}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Approved: the run continues.") {
		t.Fatalf("approve: %d\n%s", resp.StatusCode, b)
	}
	waitStatus(t, bin, dir, runID, "completed", s)
	_, body = page("runs/" + runID)
	for _, want := range []string{"completed", "Phase 1", "calc", "Agent sessions", "<table class=\"cost\">"} {
		if !strings.Contains(body, want) {
			t.Errorf("the completed run's page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "inbox-e2e-token-5d1c") {
		t.Error("the page shows the token")
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d after SIGTERM\n%s", code, s.output())
	}
}

// TestServeInboxBrowser drives the run page in a real headless Chromium
// over the DevTools protocol: it clicks Approve and sees the run complete
// on the page (the live update), and saves a screenshot.
func TestServeInboxBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Start(t, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1000, 900))
	const runID = "r-20260101-inbox2"
	s, bin, dir, base := startInbox(t, runID)

	// The page's status, read in one evaluation: a live update may replace
	// the element between a query and its read.
	status := chromedp.Evaluate[string](`document.querySelector("h1 .status").textContent`)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"runs/"+runID), chromedp.WaitVisible(chromedp.CSS("#approve"))); err != nil {
		t.Fatalf("load the run page: %v\n%s", err, s.output())
	}
	if got, err := chromedp.Run(ctx, status); err != nil || got != "awaiting_approval" {
		t.Fatalf("the page says %q (%v), want awaiting_approval", got, err)
	}
	// The plan, rendered from its Markdown, comes before the Approve
	// button (above it, or beside it on its left).
	before := `(() => { const p = document.getElementById("plan"), a = document.getElementById("approve");
		if (!p || !p.querySelector(".md h1, .md h2, .md p")) return false;
		const r = p.getBoundingClientRect(), b = a.getBoundingClientRect();
		return r.bottom <= b.top || (r.right <= b.left && r.top <= b.top); })()`
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](before)); err != nil || !ok {
		t.Errorf("the plan is not rendered before the Approve button (%v)", err)
	}
	shot(t, ctx, "inbox-approval.png")
	// Click Approve; the page comes back from the POST, then the events
	// update it until the run has completed — no reload by the test.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#approve")),
		chromedp.WaitVisible(chromedp.CSS("h1 .status.completed")),
		chromedp.WaitVisible(chromedp.CSS("p.said")),
	); err != nil {
		v, _ := statusOf(t, bin, dir, runID)
		t.Fatalf("approve in the browser: %v (the run is %s)\n%s", err, v.Status, s.output())
	}
	if got, err := chromedp.Run(ctx, status); err != nil || got != "completed" {
		t.Errorf("the page says %q (%v), want completed", got, err)
	}
	if u, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live").dataset.updated || ""`)); err != nil || u == "" {
		t.Errorf("the page completed without a live update (%q, %v)", u, err)
	}
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "completed" {
		t.Errorf("the page says completed, status says %s", v.Status)
	}
	// The completed run's page names its branch and the merge command.
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("branch") || {}).textContent || ""`)); err != nil ||
		!strings.Contains(got, "gaffer/"+runID) || !strings.Contains(got, "gaffer merge "+runID) {
		t.Errorf("the completed run's branch line is %q (%v), want its branch and gaffer merge %s", got, err, runID)
	}
	shot(t, ctx, "inbox-completed.png")
}

// shot saves a PNG of the browser's viewport into the test's artifact
// directory (go test -artifacts keeps it) and logs where.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
}
