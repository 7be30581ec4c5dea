package inbox

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// t0 is the fixtures' clock.
var t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// fakeService serves fixed runs and records answers.
type fakeService struct {
	host.Service // the operations the inbox never calls
	mu           sync.Mutex
	runs         []host.RunStatus
	answers      []host.AnswerRequest
}

func (f *fakeService) List(context.Context, host.ListRequest) ([]host.ListEntry, error) {
	return host.EntriesOf(f.runs), nil
}

func (f *fakeService) Status(_ context.Context, req host.RunRequest) (host.RunStatus, error) {
	for _, r := range f.runs {
		if r.Snapshot.RunID == req.RunID {
			return r, nil
		}
	}
	return host.RunStatus{}, &host.Error{Code: host.Refused, Err: fmt.Errorf("no run %s in the store", req.RunID)}
}

func (f *fakeService) Answer(_ context.Context, req host.AnswerRequest) (host.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, req)
	return host.Outcome{RunID: req.RunID, Kind: host.HandedOn}, nil
}

// fakeRepo diffs every phase alike.
type fakeRepo struct{ patch string }

func (fakeRepo) DiffStat(context.Context, string, string) ([]workspace.FileStat, error) {
	return []workspace.FileStat{{Path: "calc/calc.go", Added: 12, Deleted: 3}, {Path: "docs/gaffer/run/summary.md", Added: 4},
		{Path: "logo.png", Binary: true}}, nil
}

// Unmerged says every run's branch holds work not merged yet.
func (fakeRepo) Unmerged(_ context.Context, branch string) (map[string]bool, error) {
	return map[string]bool{branch: true}, nil
}

func (r fakeRepo) Diff(_ context.Context, _, _ string, _ []string, w io.Writer) error {
	_, err := io.WriteString(w, r.patch)
	return err
}

const patch = `diff --git a/calc/calc.go b/calc/calc.go
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -1,3 +1,12 @@
+// Add returns a+b; <b>not</b> markup.
+func Add(a, b int) int { return a + b }
`

// planMarkdown is the plan as written, in Markdown.
const planMarkdown = `# Build a calculator

A **small** package with one function.

## Phase 1: tests

- 1a Write tests for Add: table tests in ` + "`calc/calc_test.go`" + `.

## Phase 2: implementation

- 2a Implement Add in ` + "`calc/calc.go`" + `.
`

func plan() state.Plan {
	return state.Plan{Preamble: "Build a calculator.\n", Markdown: planMarkdown, Mode: state.ModeTask,
		Tasks: []state.Task{
			{ID: "1a", Title: "Write tests for Add", Type: state.TypeTest, Files: []string{"calc/calc_test.go"}, Description: "Table tests."},
			{ID: "2a", Title: "Implement Add", Type: state.TypeImpl, DependsOn: []string{"1a"}, Files: []string{"calc/calc.go"}},
		},
		Phases: []state.Phase{{Index: 0, TaskIDs: []string{"1a"}}, {Index: 1, TaskIDs: []string{"2a"}}}}
}

// fixtures are four runs: one completed, one that waits for its plan's
// approval (its goal holds markup), one that asks recovery's question,
// one queued.
func fixtures() []host.RunStatus {
	done := state.ExecutionState{
		Run: state.RunInfo{ID: "r-20260101-done", Goal: "Add a calculator", CreatedAt: t0.Add(-time.Hour), ExecDir: "docs/gaffer/run",
			WorkTree: "/src/calc/.git/gaffer.worktrees/r-20260101-done"},
		Plan: plan(), Status: state.RunCompleted,
		Progress: state.Progress{Phases: []state.PhaseState{
			{Index: 0, Status: state.PhaseCompleted, Attempt: 1, StartedAt: t0.Add(-50 * time.Minute), CompletedAt: t0.Add(-48 * time.Minute),
				PreCommit: "1111111aaaa", PostCommit: "2222222bbbb", Review: &state.ReviewResult{Approved: true, Comments: "Tests cover the edge cases."}},
			{Index: 1, Status: state.PhaseCompleted, Attempt: 2, StartedAt: t0.Add(-47 * time.Minute), CompletedAt: t0.Add(-40*time.Minute - 30*time.Second),
				PreCommit: "2222222bbbb", PostCommit: "3333333cccc", Error: "",
				Review: &state.ReviewResult{Approved: true, Comments: "Overflow is handled now."},
				Rejections: []state.Rejection{{Attempt: 1, Iteration: 1, Review: state.ReviewResult{Comments: "Add wraps on overflow.",
					Items: []state.ReviewItem{{Text: "Handle overflow", Verdict: state.VerdictImplement, Reason: "int64 wraps"}}}}}},
		}},
		Usage: map[string]state.Usage{"developer": {InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0081}, "reviewer": {InputTokens: 400, OutputTokens: 50, CachedTokens: 100, CostUSD: 0.002}},
	}
	parked := state.ExecutionState{
		Run:  state.RunInfo{ID: "r-20260102-plan", Goal: `Fix <script>alert("x")</script> & friends`, CreatedAt: t0.Add(-10 * time.Minute), ExecDir: "docs/gaffer/plan"},
		Plan: plan(), Status: state.RunRunning,
	}
	q := nodes.Question{RunID: "r-20260103-ask", Kind: nodes.QuestionKind, Phase: 1, Attempt: 3, Decision: "needs_human",
		Why: "the tests fail the same way three times", Diagnosis: "--- FAIL: TestAdd\n    calc_test.go:9: got 3, want 4"}
	payload, _ := json.Marshal(q)
	asking := state.ExecutionState{
		Run:  state.RunInfo{ID: "r-20260103-ask", Goal: "Speed up the parser", CreatedAt: t0.Add(-5 * time.Minute), ExecDir: "docs/gaffer/ask"},
		Plan: plan(), Status: state.RunRunning,
		Progress: state.Progress{Phases: []state.PhaseState{
			{Index: 0, Status: state.PhaseRetrying, Attempt: 3, StartedAt: t0.Add(-4 * time.Minute), PreCommit: "4444444dddd", Error: "go test failed",
				Lanes: []state.LaneProgress{{Tasks: []string{"1a"}, Status: state.LaneFailed, Attempt: 3, Iteration: 1}}},
		}},
		Errors: []string{"phase 1 attempt 3: go test failed"},
	}
	queued := host.RunStatus{Status: host.StatusQueued, Pending: true}
	queued.Snapshot.RunID = "r-20260104-queued"
	return []host.RunStatus{
		queued,
		{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: "r-20260103-ask", Seq: 9, State: asking,
			Interrupt: &graph.PendingInterrupt{Node: nodes.NodeRecover, Payload: payload}}, Status: "awaiting_approval"},
		{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: "r-20260102-plan", Seq: 3, State: parked,
			Interrupt: &graph.PendingInterrupt{Node: nodes.NodeApproval}}, Status: "awaiting_approval"},
		{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: "r-20260101-done", Seq: 20, State: done}, Status: "completed"},
	}
}

// newTest serves the fixtures; the key is fixed, so pages (their CSRF
// tokens) are the same each time.
func newTest(t *testing.T, token string) (*Server, *fakeService) {
	t.Helper()
	transcripts := t.TempDir()
	dir := filepath.Join(transcripts, "r-20260101-done")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := `{"time":"2026-01-02T09:11:00Z","kind":"text","text":"I will write <the> tests."}
{"time":"2026-01-02T09:11:01Z","kind":"tool_call","tool":"bash","input":"go test ./..."}
{"time":"2026-01-02T09:11:02Z","kind":"usage","usage":{"input_tokens":10}}
{"time":"2026-01-02T09:11:03Z","kind":"tool_result","tool":"bash","text":"FAIL","is_error":true}
`
	if err := os.WriteFile(filepath.Join(dir, "001-developer-p1-a1-i1.jsonl"), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := &fakeService{runs: fixtures()}
	s, err := New(Config{Service: svc, Repo: fakeRepo{patch: patch}, Transcripts: transcripts, Token: token,
		Key: []byte("test key"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, svc
}

// get serves a GET of path with the session cookie.
func get(t *testing.T, s http.Handler, path string, mod ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", "http://127.0.0.1:8080"+path, nil)
	for _, m := range mod {
		m(r)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// fixedCookie gives a request the session "n.<its mac>".
func fixedCookie(s *Server) func(*http.Request) {
	return func(r *http.Request) {
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: "n." + s.mac("session:n")})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, path, got)
	}
}

func TestGoldenPages(t *testing.T) {
	s, _ := newTest(t, "")
	for _, c := range []struct{ name, path string }{
		{"index", "/"},
		{"index-live", "/live"},
		{"run-completed", "/runs/r-20260101-done"},
		{"run-approval", "/runs/r-20260102-plan"},
		{"run-question", "/runs/r-20260103-ask?said=approved"},
		{"run-queued", "/runs/r-20260104-queued"},
		{"run-live", "/runs/r-20260102-plan/live"},
		{"not-found", "/runs/r-nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := get(t, s, c.path, fixedCookie(s))
			if c.name == "not-found" {
				if w.Code != http.StatusNotFound {
					t.Errorf("status %d, want 404", w.Code)
				}
			} else if w.Code != http.StatusOK {
				t.Fatalf("status %d:\n%s", w.Code, w.Body)
			}
			golden(t, c.name, w.Body.String())
		})
	}
}

func TestNeedsFirst(t *testing.T) {
	s, _ := newTest(t, "")
	body := get(t, s, "/", fixedCookie(s)).Body.String()
	order := regexp.MustCompile(`<h2><a href="/runs/([^"]+)">`).FindAllStringSubmatch(body, -1)
	var ids []string
	for _, m := range order {
		ids = append(ids, m[1])
	}
	want := "r-20260103-ask r-20260102-plan r-20260104-queued r-20260101-done"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}

func TestRunContentIsEscaped(t *testing.T) {
	s, _ := newTest(t, "")
	for _, path := range []string{"/", "/runs/r-20260102-plan", "/runs/r-20260101-done"} {
		body := get(t, s, path, fixedCookie(s)).Body.String()
		for _, raw := range []string{"<script>alert", "<b>not</b>", "<the>"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s renders %q unescaped", path, raw)
			}
		}
		if strings.Count(body, "<script") != 1 { // the inbox's own script only
			t.Errorf("%s: %d script elements", path, strings.Count(body, "<script"))
		}
	}
	if body := get(t, s, "/runs/r-20260102-plan", fixedCookie(s)).Body.String(); !strings.Contains(body, "Fix &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; friends") {
		t.Errorf("the goal is not shown escaped:\n%s", body)
	}
}

func TestNoSecretOnAnyPage(t *testing.T) {
	const token = "tok-3c1f9e0a7b2d4e58a6f0"
	secret := "sk-ant-secret-value-42"
	t.Setenv("ANTHROPIC_API_KEY", secret)
	t.Setenv("GAFFER_TEST_PASSWORD", secret+"-pw")
	s, _ := newTest(t, token)
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	for _, path := range []string{"/", "/live", "/runs/r-20260101-done", "/runs/r-20260102-plan", "/runs/r-20260103-ask", "/runs/r-nope", "/?token=wrong"} {
		w := get(t, s, path, bearer)
		all := w.Body.String() + fmt.Sprint(w.Header())
		for _, v := range []string{token, secret, string(s.cfg.Key)} {
			if strings.Contains(all, v) {
				t.Errorf("%s shows a secret %q", path, v)
			}
		}
		for _, e := range os.Environ() {
			_, v, _ := strings.Cut(e, "=")
			if len(v) >= 12 && strings.Contains(v, "secret") && strings.Contains(all, v) {
				t.Errorf("%s shows the environment's %s", path, e)
			}
		}
	}
}

func TestTokenRequired(t *testing.T) {
	const token = "tok-3c1f9e0a7b2d4e58a6f0"
	s, _ := newTest(t, token)
	for _, c := range []struct {
		name string
		mod  func(*http.Request)
		want int
	}{
		{"missing", func(*http.Request) {}, http.StatusUnauthorized},
		{"bad bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusUnauthorized},
		{"empty bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }, http.StatusUnauthorized},
		{"forged cookie", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: sessionCookie, Value: "n.0000"}) }, http.StatusUnauthorized},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }, http.StatusOK},
		{"cookie", fixedCookie(s), http.StatusOK},
	} {
		for _, path := range []string{"/", "/runs/r-20260101-done", "/runs/r-20260101-done/live", "/live"} {
			if w := get(t, s, path, c.mod); w.Code != c.want {
				t.Errorf("%s %s: status %d, want %d", c.name, path, w.Code, c.want)
			}
		}
	}
	if w := get(t, s, "/?token=nope"); w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) > 0 {
		t.Errorf("a wrong ?token= login: status %d, cookies %v", w.Code, w.Result().Cookies())
	}
}

// TestLoginAndAnswer logs in with ?token= through a real HTTP client with a
// cookie jar, then approves with the page's CSRF token.
func TestLoginAndAnswer(t *testing.T) {
	const token = "tok-3c1f9e0a7b2d4e58a6f0"
	s, svc := newTest(t, token)
	srv := httptest.NewServer(s)
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/runs/r-20260102-plan?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Query().Has("token") {
		t.Fatalf("login: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	u, _ := url.Parse(srv.URL)
	cookies := jar.Cookies(u)
	if len(cookies) != 1 || cookies[0].Name != sessionCookie {
		t.Fatalf("cookies %v", cookies)
	}
	sc := resp.Request.Response.Header.Get("Set-Cookie") // the login's redirect set it
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") {
		t.Errorf("session cookie %q, want HttpOnly and SameSite=Strict", sc)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(body)
	if csrf == nil {
		t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	post := func(form url.Values) *http.Response {
		t.Helper()
		resp, err := c.PostForm(srv.URL+"/runs/r-20260102-plan/answer", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := post(url.Values{"action": {"approve"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("approve without a CSRF token: %d, want 403", r.StatusCode)
	}
	if r := post(url.Values{"action": {"approve"}, "csrf": {"00" + string(csrf[1][2:])}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("approve with a wrong CSRF token: %d, want 403", r.StatusCode)
	}
	if len(svc.answers) != 0 {
		t.Fatalf("answered without a CSRF token: %+v", svc.answers)
	}
	if r := post(url.Values{"action": {"reject"}, "csrf": {string(csrf[1])}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("reject without feedback: %d, want 400", r.StatusCode)
	}
	if r := post(url.Values{"action": {"approve"}, "csrf": {string(csrf[1])}}); r.StatusCode != http.StatusOK || r.Request.URL.Query().Get("said") != "approved" {
		t.Errorf("approve: %d at %s", r.StatusCode, r.Request.URL)
	}
	if r := post(url.Values{"action": {"reject"}, "feedback": {"smaller phases"}, "csrf": {string(csrf[1])}}); r.StatusCode != http.StatusOK {
		t.Errorf("reject: %d", r.StatusCode)
	}
	want := []host.AnswerRequest{{RunID: "r-20260102-plan", Verdict: host.Approve}, {RunID: "r-20260102-plan", Verdict: host.Reject, Feedback: "smaller phases"}}
	if fmt.Sprint(svc.answers) != fmt.Sprint(want) {
		t.Errorf("answers %+v, want %+v", svc.answers, want)
	}
	// Another session's CSRF token is refused: it is bound to the session.
	other := s.csrf("n." + s.mac("session:n"))
	if r := post(url.Values{"action": {"approve"}, "csrf": {other}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("approve with another session's CSRF token: %d, want 403", r.StatusCode)
	}
}

func TestLoopbackOnlyWithoutToken(t *testing.T) {
	s, svc := newTest(t, "")
	w := get(t, s, "/", func(r *http.Request) { r.Host = "evil.example:8080" })
	if w.Code != http.StatusForbidden {
		t.Errorf("a request to another host name: %d, want 403", w.Code)
	}
	// Without a token a first GET gets a session; a POST needs its CSRF.
	w = get(t, s, "/runs/r-20260103-ask", func(r *http.Request) { r.Host = "localhost:8080" })
	if w.Code != http.StatusOK || len(w.Result().Cookies()) != 1 {
		t.Fatalf("first visit: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	cookie := w.Result().Cookies()[0]
	csrf := s.csrf(cookie.Value)
	answer := func(form url.Values, withCookie bool) int {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8080/runs/r-20260103-ask/answer", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if withCookie {
			r.AddCookie(cookie)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	if code := answer(url.Values{"action": {"retry"}, "csrf": {csrf}}, false); code != http.StatusForbidden {
		t.Errorf("retry without the session cookie: %d, want 403", code)
	}
	if code := answer(url.Values{"action": {"retry"}}, true); code != http.StatusForbidden {
		t.Errorf("retry without the CSRF token: %d, want 403", code)
	}
	if code := answer(url.Values{"action": {"retry"}, "feedback": {"use big.Int"}, "csrf": {csrf}}, true); code != http.StatusSeeOther {
		t.Errorf("retry: %d, want 303", code)
	}
	if want := (host.AnswerRequest{RunID: "r-20260103-ask", Verdict: host.Retry, Feedback: "use big.Int"}); len(svc.answers) != 1 || svc.answers[0] != want {
		t.Errorf("answers %+v, want %+v", svc.answers, want)
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true, "127.0.0.2:9": true,
		":8080": false, "0.0.0.0:8080": false, "192.168.1.2:80": false, "example.com:80": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestPatchIsBounded(t *testing.T) {
	long := strings.Repeat("+a line of the patch that goes on\n", 2*maxPatchBytes/34)
	svc := &fakeService{runs: fixtures()}
	s, err := New(Config{Service: svc, Repo: fakeRepo{patch: long}, Key: []byte("k"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, s, "/runs/r-20260101-done").Body.String()
	if !strings.Contains(body, "The patch is cut at 32 KiB") || !strings.Contains(body, "gaffer diff --phase 1 r-20260101-done") {
		t.Errorf("a long patch is not said to be cut")
	}
	if len(body) > 3*maxPatchBytes {
		t.Errorf("the page is %d bytes: the patches are not bounded", len(body))
	}
	var c capped
	c.max = 10
	n, err := c.Write([]byte("12345\n7890abc\n"))
	if n != 10 || err != errCapped || c.b.String() != "12345\n" || !c.cut {
		t.Errorf("capped: %d %v %q %v", n, err, c.b.String(), c.cut)
	}
}

func TestTranscriptIsBounded(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "r-1")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, `{"kind":"text","text":"line %d"}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(run, "001-architect-p0-a1-i1.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ss := readSessions(dir, "r-1")
	if len(ss) != 1 || !ss[0].Cut || ss[0].Lines[len(ss[0].Lines)-1].Text != "line 1999" || len(ss[0].Lines) > 1000 {
		t.Errorf("sessions: %d, cut %v, %d lines", len(ss), len(ss) > 0 && ss[0].Cut, len(ss[0].Lines))
	}
	if readSessions(dir, "..") != nil || readSessions(dir, "a/b") != nil {
		t.Error("a run id outside the directory is read")
	}
}

// TestEventsStream streams a run's events: an update at the start, one
// for each of its checkpoints, none for another run's.
func TestEventsStream(t *testing.T) {
	var mu sync.Mutex
	var subs []func(graph.Event)
	svc := &fakeService{runs: fixtures()}
	s, err := New(Config{Service: svc, Key: []byte("k"), Subscribe: func(f func(graph.Event)) func() {
		mu.Lock()
		defer mu.Unlock()
		subs = append(subs, f)
		return func() {}
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer s.Close()
	resp, err := http.Get(srv.URL + "/runs/r-20260102-plan/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	read := func() string {
		t.Helper()
		buf := make([]byte, 256)
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	if got := read(); !strings.Contains(got, "event: update") {
		t.Fatalf("first event %q", got)
	}
	mu.Lock()
	emit := subs[0]
	mu.Unlock()
	emit(graph.Event{Kind: graph.CheckpointSaved, RunID: "r-other"})
	emit(graph.Event{Kind: graph.CheckpointSaved, RunID: "r-20260102-plan"})
	if got := read(); got != "event: update\ndata: {}\n\n" {
		t.Errorf("event %q", got)
	}
}

// TestRunPageDrawsTheLanesLine: a phase of three lanes (one done, one
// running, one failed with its error) is drawn on the run page with the
// lane line status draws (runview.Phase.LanesLine), its error escaped.
func TestRunPageDrawsTheLanesLine(t *testing.T) {
	p := state.Plan{Markdown: "# Greetings\n", Mode: state.ModePhased,
		Tasks: []state.Task{
			{ID: "1", Title: "Write model tests", Type: state.TypeTest, Files: []string{"model_test.go"}},
			{ID: "2", Title: "Write API tests", Type: state.TypeTest, Files: []string{"api_test.go"}},
			{ID: "3", Title: "Write CLI tests", Type: state.TypeTest, Files: []string{"cli_test.go"}},
		},
		Phases: []state.Phase{{Index: 0, TaskIDs: []string{"1", "2", "3"}}}}
	st := state.ExecutionState{
		Run:  state.RunInfo{ID: "r-20260105-lanes", Goal: "Test the greetings", CreatedAt: t0.Add(-5 * time.Minute), ExecDir: "docs/gaffer/lanes"},
		Plan: p, Status: state.RunRunning,
		Progress: state.Progress{Phases: []state.PhaseState{{Index: 0, Status: state.PhaseRunning, Attempt: 1, StartedAt: t0.Add(-2 * time.Minute),
			PreCommit: "5555555eeee", Lanes: []state.LaneProgress{
				{Tasks: []string{"1"}, Status: state.LaneDone, Attempt: 1, StartedAt: t0.Add(-2 * time.Minute), CompletedAt: t0.Add(-90 * time.Second)},
				{Tasks: []string{"2"}, Status: state.LaneRunning, Attempt: 1, StartedAt: t0.Add(-40 * time.Second)},
				{Tasks: []string{"3"}, Status: state.LaneFailed, Attempt: 2, StartedAt: t0.Add(-2 * time.Minute), CompletedAt: t0.Add(-time.Minute),
					Error: "go test: <nil> pointer in cli_test.go"},
			}}}},
	}
	run := host.RunStatus{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: st.Run.ID, Seq: 7, State: st}, Status: "running"}
	s, err := New(Config{Service: &fakeService{runs: []host.RunStatus{run}}, Repo: fakeRepo{patch: patch}, Transcripts: t.TempDir(),
		Key: []byte("test key"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	w := get(t, s, "/runs/"+st.Run.ID, fixedCookie(s))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", w.Code, w.Body)
	}
	body := w.Body.String()
	want := "✓ 1 Write model tests (30s) · ● 2 Write API tests (running 40s) · ✗ 3 Write CLI tests (attempt 2, failed: go test: &lt;nil&gt; pointer in cli_test.go)"
	if !strings.Contains(body, `<p class="lanes"><span class="meta">3 lanes:</span> `+want+`</p>`) {
		t.Errorf("the run page lacks the lane line %q:\n%s", want, body)
	}
	golden(t, "run-lanes", body)
}
