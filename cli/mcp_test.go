package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/state"
)

// mcpClient is the SDK's client on `gaffer mcp` run by the real binary
// over its standard input and output, with the progress notifications
// it was sent.
type mcpClient struct {
	t  *testing.T
	cs *mcp.ClientSession

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func startMCP(t *testing.T, bin, dir string, env ...string) *mcpClient {
	t.Helper()
	return startMCPEliciting(t, bin, dir, nil, env...)
}

// startMCPEliciting is startMCP with a client that declares elicitation
// and answers it with elicit, when elicit is set.
func startMCPEliciting(t *testing.T, bin, dir string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), env ...string) *mcpClient {
	t.Helper()
	m := &mcpClient{t: t}
	client := mcp.NewClient(&mcp.Implementation{Name: "gaffer-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			m.mu.Lock()
			m.progress = append(m.progress, req.Params)
			m.mu.Unlock()
		},
		ElicitationHandler: elicit,
	})
	cmd := exec.Command(bin, "--repo", dir, "mcp")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.cs = cs
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() { // what the detached processes said
			logs, _ := filepath.Glob(filepath.Join(dir, ".git", "gaffer.mcp", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", filepath.Base(l), b)
			}
		}
		waitDetached(t, dir)
	})
	return m
}

// call calls tool name with args and returns its result, failing t on a
// protocol error (a tool error is a result).
func (m *mcpClient) call(name string, args map[string]any) *mcp.CallToolResult {
	m.t.Helper()
	res, err := m.cs.CallTool(m.t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		m.t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls name and decodes its structured result into out, failing t on
// a tool error.
func (m *mcpClient) ok(name string, args map[string]any, out any) {
	m.t.Helper()
	res := m.call(name, args)
	if res.IsError {
		m.t.Fatalf("%s(%v): tool error: %s", name, args, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		m.t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		m.t.Fatalf("%s: %v\n%s", name, err, b)
	}
}

// fails calls name and returns its tool error's text, failing t when the
// call succeeds.
func (m *mcpClient) fails(name string, args map[string]any) string {
	m.t.Helper()
	res := m.call(name, args)
	if !res.IsError {
		m.t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, resultText(res))
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func (m *mcpClient) resource(uri string) string {
	m.t.Helper()
	res, err := m.cs.ReadResource(m.t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		m.t.Fatalf("read %s: %v", uri, err)
	}
	return res.Contents[0].Text
}

type mcpStarted struct {
	RunID    string `json:"run_id"`
	Branch   string `json:"branch"`
	WorkTree string `json:"work_tree"`
	Where    string `json:"where"`
	Status   string `json:"status"`
	PID      int    `json:"pid"`
}

// waitDetached waits for every process started with --repo dir to end
// (the detached runs of `gaffer mcp`, once their runs have stopped), so
// that none writes into the test's temporary directory as it is removed.
func waitDetached(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := ""
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range cmdlines {
			b, _ := os.ReadFile(f)
			if args := strings.Split(string(b), "\x00"); len(args) > 2 && args[1] == "--repo" && args[2] == dir {
				left = strings.Join(args, " ")
			}
		}
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running: %s", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type mcpRun struct {
	RunID        string `json:"run_id"`
	Status       string `json:"status"`
	Branch       string `json:"branch"`
	CurrentPhase int    `json:"current_phase"`
	Phases       []struct {
		Number int    `json:"number"`
		Status string `json:"status"`
	} `json:"phases"`
}

// demoRepoAndPlanText is demoRepo with its plan's text in place of its path.
func demoRepoAndPlanText(t *testing.T) (dir string, planText []byte, script string) {
	t.Helper()
	dir, planPath, script := demoRepo(t)
	planText, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	return dir, planText, script
}

// TestMCPEveryToolThroughTheBinary drives `gaffer mcp` with the SDK's
// client over stdio through every tool and resource: a run started,
// followed with progress, approved, read, merged; bad input refused as
// tool errors that change nothing.
func TestMCPEveryToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, planText, script := demoRepoAndPlanText(t)
	m := startMCP(t, bin, dir)
	ctx := t.Context()

	tools, err := m.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	for _, name := range []string{"plan_validate", "runs_list", "run_status", "run_start", "run_approve", "run_reject", "run_answer",
		"run_cancel", "run_logs", "run_diff", "run_merge", "run_wait"} {
		tl := byName[name]
		if tl == nil || tl.Annotations == nil || tl.OutputSchema == nil {
			t.Fatalf("tool %s: %+v", name, tl)
		}
	}
	// run_wait approves or rejects a plan when the user answers its
	// elicitation, so it is not read-only either.
	for _, name := range []string{"run_merge", "run_cancel", "run_approve", "run_start", "run_wait"} {
		if byName[name].Annotations.ReadOnlyHint {
			t.Errorf("%s says it is read-only", name)
		}
	}
	for _, name := range []string{"run_status", "runs_list", "run_diff", "run_logs", "plan_validate"} {
		if !byName[name].Annotations.ReadOnlyHint {
			t.Errorf("%s does not say it is read-only", name)
		}
	}
	if d := byName["run_cancel"].Annotations.DestructiveHint; d == nil || !*d {
		t.Errorf("run_cancel does not say it is destructive")
	}

	// Bad input before there is a store: tool errors, and no store made.
	store := filepath.Join(dir, ".git", "gaffer")
	if msg := m.fails("run_status", map[string]any{"run_id": "r-20260101-nosuch"}); !strings.Contains(msg, "no runs") {
		t.Errorf("unknown run without a store: %s", msg)
	}
	if msg := m.fails("run_approve", map[string]any{"run_id": "../../etc"}); msg == "" {
		t.Error("a bad run id: no message")
	}
	huge := "### Task 1: x\n" + strings.Repeat("y", state.MaxPlanBytes)
	if msg := m.fails("run_start", map[string]any{"plan": huge, "script": script}); !strings.Contains(msg, "over the limit") {
		t.Errorf("plan over the limit: %s", msg)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Fatalf("bad input made the store: %v", err)
	}
	var check struct {
		Valid  bool `json:"valid"`
		Phases []struct {
			Number int
			Lanes  [][]string
		} `json:"phases"`
		Problems []state.Problem `json:"problems"`
	}
	m.ok("plan_validate", map[string]any{"plan": string(planText)}, &check)
	if !check.Valid || len(check.Phases) == 0 || len(check.Problems) != 0 || len(check.Phases[0].Lanes) != 2 {
		t.Fatalf("plan_validate of the demo plan (phase 1: two lanes, 1a and 1b): %+v", check)
	}
	m.ok("plan_validate", map[string]any{"plan": "### Task 1: a\n- depends on: 9\n"}, &check)
	if check.Valid || len(check.Problems) == 0 || check.Problems[0].Line == 0 {
		t.Fatalf("plan_validate of a bad plan: %+v", check)
	}
	var list struct {
		Runs  []mcpRun `json:"runs"`
		Total int      `json:"total"`
	}
	m.ok("runs_list", nil, &list)
	if list.Total != 0 {
		t.Fatalf("runs before any: %+v", list)
	}

	// A run started: it waits for approval, in the store, after its
	// detached process has gone.
	var started mcpStarted
	m.ok("run_start", map[string]any{"plan": string(planText), "script": script}, &started)
	if started.RunID == "" || started.Branch != "gaffer/"+started.RunID || !strings.Contains(started.Where, "detached") {
		t.Fatalf("run_start = %+v", started)
	}
	id := started.RunID
	var waited struct {
		Reason string `json:"reason"`
		Run    mcpRun `json:"run"`
	}
	m.ok("run_wait", map[string]any{"run_id": id, "timeout_seconds": 60}, &waited)
	if waited.Reason != "needs_human" || waited.Run.Status != "awaiting_approval" {
		t.Fatalf("run_wait before approval = %+v", waited)
	}
	var v mcpRun
	m.ok("run_status", map[string]any{"run_id": id}, &v)
	if v.Status != "awaiting_approval" || v.RunID != id || len(v.Phases) == 0 {
		t.Fatalf("run_status = %+v", v)
	}
	if got := m.resource("gaffer://runs/" + id + "/plan"); got != string(planText) {
		t.Errorf("plan resource:\n%s\nwant\n%s", got, planText)
	}
	if msg := m.fails("run_answer", map[string]any{"run_id": id, "decision": "approve"}); !strings.Contains(msg, "retry, stop or skip") {
		t.Errorf("run_answer approve: %s", msg)
	}
	if msg := m.fails("run_diff", map[string]any{"run_id": id}); !strings.Contains(msg, "no phase") {
		t.Errorf("diff before any phase: %s", msg)
	}

	// Approved: the run goes on in a detached process; run_wait follows
	// it to its end with progress notifications.
	var ans struct{ Outcome, Message, Status string }
	m.ok("run_approve", map[string]any{"run_id": id}, &ans)
	if ans.Outcome != "handed_on" {
		t.Fatalf("run_approve = %+v", ans)
	}
	params := &mcp.CallToolParams{Name: "run_wait", Arguments: map[string]any{"run_id": id, "timeout_seconds": 120}}
	params.SetProgressToken("wait-1")
	res, err := m.cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("run_wait: %v %s", err, resultText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &waited)
	if waited.Reason != "ended" || waited.Run.Status != "completed" {
		t.Fatalf("run_wait after approval = %+v", waited)
	}
	m.mu.Lock()
	progress := len(m.progress)
	for _, p := range m.progress {
		if p.ProgressToken != "wait-1" || p.Message == "" {
			t.Errorf("progress %+v", p)
		}
	}
	m.mu.Unlock()
	if progress == 0 {
		t.Error("run_wait sent no progress notification")
	}

	// The run's work, bounded.
	var diff struct {
		Text       string `json:"text"`
		Truncated  bool   `json:"truncated"`
		TotalBytes int    `json:"total_bytes"`
		Note       string `json:"note"`
	}
	m.ok("run_diff", map[string]any{"run_id": id}, &diff)
	if diff.Truncated || !strings.Contains(diff.Text, "diff --git") {
		t.Fatalf("run_diff = %+v", diff)
	}
	m.ok("run_diff", map[string]any{"run_id": id, "max_bytes": 300}, &diff)
	if !diff.Truncated || len(diff.Text) > 300 || diff.TotalBytes <= 300 || !strings.Contains(diff.Note, "cut") {
		t.Fatalf("run_diff cut = %+v", diff)
	}
	m.ok("run_logs", map[string]any{"run_id": id, "phase": 1}, &diff)
	if diff.Text == "" {
		t.Fatal("run_logs: empty")
	}
	if got := m.resource("gaffer://runs/" + id + "/summary/1"); !strings.Contains(got, "Phase 1") && !strings.Contains(got, "phase 1") {
		t.Errorf("summary/1:\n%s", got)
	}
	if got := m.resource("gaffer://runs/" + id + "/records/1"); !strings.Contains(got, "Decision records of phase 1:") || !strings.Contains(got, "TestAddSub(t *testing.T)") {
		t.Errorf("records/1:\n%s", got)
	}
	if _, err := m.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "gaffer://runs/" + id + "/records/99"}); err == nil {
		t.Error("records of a phase the run lacks: no error")
	}
	if got := m.resource("gaffer://runs/" + id + "/story"); !strings.Contains(got, "Story so far") {
		t.Errorf("story:\n%s", got)
	}
	if got := m.resource("gaffer://runs/" + id + "/diff"); !strings.Contains(got, "diff --git") {
		t.Errorf("diff resource:\n%s", got)
	}
	if _, err := m.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "gaffer://runs/" + id + "/summary/99"}); err == nil {
		t.Error("summary of a phase the run lacks: no error")
	}

	// Merge: a dry run by default, which changes nothing.
	head := gitOut(t, dir, "rev-parse", "HEAD")
	var merged struct {
		DryRun bool   `json:"dry_run"`
		Text   string `json:"text"`
	}
	m.ok("run_merge", map[string]any{"run_id": id}, &merged)
	if !merged.DryRun || !strings.Contains(merged.Text, "Would") || gitOut(t, dir, "rev-parse", "HEAD") != head {
		t.Fatalf("run_merge dry run = %+v", merged)
	}
	m.ok("run_merge", map[string]any{"run_id": id, "dry_run": false}, &merged)
	if merged.DryRun || gitOut(t, dir, "rev-parse", "HEAD") == head {
		t.Fatalf("run_merge = %+v", merged)
	}
	if msg := m.fails("run_cancel", map[string]any{"run_id": id}); !strings.Contains(msg, id) {
		t.Errorf("cancel of a finished run: %s", msg)
	}
	m.ok("runs_list", map[string]any{"status": "completed"}, &list)
	if list.Total != 1 || list.Runs[0].RunID != id {
		t.Fatalf("runs_list = %+v", list)
	}

	// A second run, rejected without feedback: it ends.
	m.ok("run_start", map[string]any{"plan": string(planText), "script": script}, &started)
	m.ok("run_wait", map[string]any{"run_id": started.RunID}, &waited)
	m.ok("run_reject", map[string]any{"run_id": started.RunID}, &ans)
	m.ok("run_status", map[string]any{"run_id": started.RunID}, &v)
	if v.Status != "rejected" {
		t.Fatalf("after run_reject: %+v (%+v)", v, ans)
	}
}

// TestMCPCancelledRequest cancels a run_wait on a run that goes on: the
// client gets its error at once, the server answers the next call, and
// the run is not touched until run_cancel ends it.
func TestMCPCancelledRequest(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, planText, script := demoRepoAndPlanText(t)
	m := startMCP(t, bin, dir, "GAFFER_PACE=2s") // the detached run's agents pause: it is still running when asked
	var started mcpStarted
	m.ok("run_start", map[string]any{"plan": string(planText), "script": script, "auto_approve": true}, &started)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_wait", Arguments: map[string]any{"run_id": started.RunID}})
	if err == nil {
		t.Fatal("a cancelled run_wait returned no error")
	}
	var v mcpRun
	m.ok("run_status", map[string]any{"run_id": started.RunID}, &v)
	if v.Status != "running" {
		t.Fatalf("after the cancelled wait: %+v", v)
	}
	var ans struct{ Outcome, Status string }
	m.ok("run_cancel", map[string]any{"run_id": started.RunID}, &ans)
	deadline := time.Now().Add(60 * time.Second)
	for v.Status != "cancelled" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		m.ok("run_status", map[string]any{"run_id": started.RunID}, &v)
	}
	if v.Status != "cancelled" {
		t.Fatalf("after run_cancel: %+v (%+v)", v, ans)
	}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// startMCPHTTP starts `gaffer mcp --http 127.0.0.1:0` with args and
// returns its address.
func startMCPHTTP(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--repo", dir, "mcp", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "gaffer mcp on http://"); ok {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return strings.TrimSuffix(a, "/")
		}
	}
	t.Fatalf("gaffer mcp --http did not say where it listens")
	return ""
}

// TestMCPOverHTTPNeedsTheTokenAndALoopbackHost serves MCP over Streamable
// HTTP: with a token every request needs it; without one, a request that
// names another host (DNS rebinding) is refused; an address that is not
// loopback is refused at the start.
func TestMCPOverHTTPNeedsTheTokenAndALoopbackHost(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, _ := demoRepo(t)
	if out, code := gafferCmd(t, bin, "--repo", dir, "mcp", "--http", "0.0.0.0:0"); code != ExitUsage || !strings.Contains(out, "loopback") {
		t.Fatalf("--http 0.0.0.0:0: exit %d\n%s", code, out)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startMCPHTTP(t, bin, dir, "--token-file", tokenFile)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(addr, host, token string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(addr, "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code := post(addr, "", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gaffer-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/",
		HTTPClient: &http.Client{Transport: bearer{"s3cret-token", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plan_validate", Arguments: map[string]any{"plan": "### Task 1: a\n"}})
	if err != nil || res.IsError {
		t.Fatalf("plan_validate over HTTP: %v %s", err, resultText(res))
	}

	open := startMCPHTTP(t, bin, dir)
	if code := post(open, "evil.example:80", ""); code != http.StatusForbidden {
		t.Errorf("another host without a token: %d", code)
	}
	if code := post(open, "", ""); code != http.StatusOK {
		t.Errorf("loopback without a token: %d", code)
	}
}
