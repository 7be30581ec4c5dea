package inbox

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/browsertest"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// browserPlan is a plan as an architect writes it: headings, a table, a
// code block with a long line, a list, and a hostile link and script.
const browserPlan = "# Add overflow-safe arithmetic to calc\n\n" +
	"The calculator's `Add` wraps silently on overflow. This plan makes it **report** overflow instead.\n\n" +
	"## Phase 1: tests\n\n- **1a** Table tests for `Add` and `Sub` in `calc/calc_test.go`, with the edges: `MaxInt64`, `MinInt64`, zero.\n\n" +
	"## Phase 2: implementation\n\n- **2a** `Add` and `Sub` return `(int64, error)`; callers in `cmd/calc` print the error.\n\n" +
	"| task | files | depends on |\n|---|---|---|\n| 1a | calc/calc_test.go | — |\n| 2a | calc/calc.go, cmd/calc/main.go | 1a |\n\n" +
	"```go\nfunc Add(a, b int64) (int64, error) { if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) { return 0, ErrOverflow }; return a + b, nil }\n```\n\n" +
	"Don't follow [this link](javascript:window.pwned=1) <script>window.pwned=1</script>\n"

// browserRepo is a real git repository with two commits, the second a
// phase's work: the diff the pages show.
func browserRepo(t *testing.T) (repo *workspace.Repo, pre, post string) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("calc/calc.go", "package calc\n\n// Add returns a+b.\nfunc Add(a, b int64) int64 { return a + b }\n\n// Sub returns a-b.\nfunc Sub(a, b int64) int64 { return a - b }\n")
	write("calc/old.go", "package calc\n\nconst legacy = true\n")
	write("docs/gaffer/run/plan.md", "plan\n")
	git("add", "-A")
	git("commit", "-qm", "initial")
	pre = git("rev-parse", "HEAD")
	write("calc/calc.go", "package calc\n\nimport (\n\t\"errors\"\n\t\"math\"\n)\n\n// ErrOverflow is returned when a result does not fit in an int64, which is what happens when a caller adds two very large numbers together.\nvar ErrOverflow = errors.New(\"calc: overflow\")\n\n"+
		"// Add returns a+b, or ErrOverflow.\nfunc Add(a, b int64) (int64, error) {\n\tif (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {\n\t\treturn 0, ErrOverflow\n\t}\n\treturn a + b, nil\n}\n\n// Sub returns a-b.\nfunc Sub(a, b int64) int64 { return a - b }\n")
	if err := os.Remove(filepath.Join(dir, "calc/old.go")); err != nil {
		t.Fatal(err)
	}
	write("calc/calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif _, err := Add(1<<62, 1<<62); err == nil {\n\t\tt.Fatal(\"no overflow\")\n\t}\n}\n")
	write("docs/gaffer/run/phase-1/summary.md", "summary\n")
	git("add", "-A")
	git("commit", "-qm", "phase 1")
	post = git("rev-parse", "HEAD")
	// The completed run's work is on its branch, not yet on main: its
	// page offers the merge.
	git("branch", "gaffer/r-20260110-done")
	git("reset", "-q", "--hard", pre)
	r, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, pre, post
}

// browserRuns are the runs the browser test looks at: one waiting for its
// plan's approval, one asking recovery's question, one running a phase
// again after a rejected review,
// one completed whose phase was rejected and then approved, one stopped
// by an error.
func browserRuns(pre, post string) []host.RunStatus {
	p := plan()
	p.Markdown = browserPlan
	rejected := state.Rejection{Attempt: 1, Iteration: 1, Review: state.ReviewResult{
		Comments: "Add still wraps: TestAdd passes only because it never reaches the edge. Sub is untouched.",
		Items: []state.ReviewItem{{Text: "Check overflow before adding", Verdict: state.VerdictImplement, Reason: "int64 wraps silently"},
			{Text: "Rename calc to arith", Verdict: state.VerdictDefer, Reason: "out of scope"}}}}
	run := func(id, goal string, ago time.Duration) state.ExecutionState {
		return state.ExecutionState{Run: state.RunInfo{ID: id, Goal: goal, CreatedAt: t0.Add(-ago), ExecDir: "docs/gaffer/run",
			WorkTree: "/home/me/src/calc/.git/gaffer.worktrees/" + id}, Plan: p, Status: state.RunRunning}
	}
	parked := run("r-20260110-plan", "Add overflow-safe arithmetic to calc", 2*time.Minute)
	parked.Run.WorkTree = ""

	running := run("r-20260110-live", "Make Add report overflow", 20*time.Minute)
	running.Progress = state.Progress{Phases: []state.PhaseState{
		{Index: 0, Status: state.PhaseRunning, Attempt: 2, StartedAt: t0.Add(-9 * time.Minute), PreCommit: pre,
			Review: &rejected.Review, Rejections: []state.Rejection{rejected}}}}
	running.Usage = map[string]state.Usage{"developer": {InputTokens: 52000, OutputTokens: 4100, CachedTokens: 30000, CostUSD: 0.2113}}

	done := run("r-20260110-done", "Make Add report overflow", time.Hour)
	done.Status = state.RunCompleted
	done.Run.WorkTree = ""
	done.Progress = state.Progress{Phases: []state.PhaseState{
		{Index: 0, Status: state.PhaseCompleted, Attempt: 2, StartedAt: t0.Add(-55 * time.Minute), CompletedAt: t0.Add(-41 * time.Minute),
			PreCommit: pre, PostCommit: post, Rejections: []state.Rejection{rejected},
			Review: &state.ReviewResult{Approved: true, Comments: "Overflow is checked before the addition; the tests reach both edges."}},
		{Index: 1, Status: state.PhaseCompleted, Attempt: 1, StartedAt: t0.Add(-40 * time.Minute), CompletedAt: t0.Add(-35 * time.Minute),
			PreCommit: post, PostCommit: post, Review: &state.ReviewResult{Approved: true}},
	}}
	done.Usage = map[string]state.Usage{"developer": {InputTokens: 91000, OutputTokens: 8800, CostUSD: 0.4102}, "reviewer": {InputTokens: 20500, OutputTokens: 900, CostUSD: 0.0711}}

	stopped := run("r-20260110-stop", "Speed up the parser", 30*time.Minute)
	stopped.Progress = state.Progress{Phases: []state.PhaseState{{Index: 0, Status: state.PhaseRunning, Attempt: 1, StartedAt: t0.Add(-29 * time.Minute), PreCommit: pre}}}
	stopped.Errors = []string{"nodes: developer session (phase 1, attempt 1): anthropic: 529 overloaded: the provider is down; gaffer resume r-20260110-stop continues the run"}

	asking := run("r-20260110-ask", "Speed up the tokenizer", 15*time.Minute)
	asking.Progress = state.Progress{Phases: []state.PhaseState{{Index: 0, Status: state.PhaseRetrying, Attempt: 3, StartedAt: t0.Add(-14 * time.Minute),
		PreCommit: pre, Error: "go test failed", Rejections: []state.Rejection{rejected}}}}
	q := nodes.Question{RunID: asking.Run.ID, Kind: nodes.QuestionKind, Phase: 1, Attempt: 3, Decision: "needs_human",
		Why:       "the tests fail the same way three times",
		Diagnosis: "--- FAIL: TestTokenizeLongInput (0.02s)\n    tokenizer_test.go:88: Tokenize(strings.Repeat(\"a \", 1<<20)) took the slow path: want the fast path for inputs longer than 64 KiB, got allocation of 134217728 bytes"}
	payload, err := json.Marshal(q)
	if err != nil {
		panic(err)
	}

	snap := func(st state.ExecutionState, seq uint64) graph.Snapshot[state.ExecutionState] {
		return graph.Snapshot[state.ExecutionState]{RunID: st.Run.ID, Seq: seq, State: st}
	}
	ps := snap(parked, 3)
	ps.Interrupt = &graph.PendingInterrupt{Node: nodes.NodeApproval}
	// Done's branch is named by its work tree, which is gone once a run
	// has ended: the state keeps the path.
	done.Run.WorkTree = "/home/me/src/calc/.git/gaffer.worktrees/r-20260110-done"
	as := snap(asking, 15)
	as.Interrupt = &graph.PendingInterrupt{Node: nodes.NodeRecover, Payload: payload}
	return []host.RunStatus{
		{Snapshot: ps, Status: "awaiting_approval"},
		{Snapshot: as, Status: "awaiting_approval"},
		{Snapshot: snap(stopped, 7), Status: "running", Stopped: true},
		{Snapshot: snap(running, 12), Status: "running"},
		{Snapshot: snap(done, 30), Status: "completed"},
	}
}

// screenshotDir is where the browser test writes its screenshots:
// $GAFFER_SCREENSHOT_DIR when set, else the test's artifact directory
// (go test -artifacts keeps it).
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("GAFFER_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.ArtifactDir()
}

// TestInboxPagesInTheBrowser loads every kind of page in a real headless
// Chromium at 1280×900 and at a phone's 390×844, writes a full-page
// screenshot of each, and checks in the DOM what a reviewer needs: the
// plan rendered and before (or beside) the Approve button, the branch and
// the merge command, the rejected review on its phase's card, the diff's
// lines marked, and no page wider than the screen.
func TestInboxPagesInTheBrowser(t *testing.T) {
	ctx := browsertest.Start(t, chromedp.Flag("hide-scrollbars", true))
	repo, pre, post := browserRepo(t)
	svc := &fakeService{runs: browserRuns(pre, post)}
	s, err := New(Config{Service: svc, Repo: repo, Key: []byte("browser key"), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	base := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	dir := screenshotDir(t)

	eval := func(js string) bool {
		t.Helper()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return ok
	}
	text := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}
	pages := []struct{ name, path string }{
		{"list", "/"},
		{"approval", "/runs/r-20260110-plan"},
		{"question", "/runs/r-20260110-ask"},
		{"running", "/runs/r-20260110-live"},
		{"stopped", "/runs/r-20260110-stop"},
		{"completed", "/runs/r-20260110-done"},
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"wide", 1280, 900}, {"phone", 390, 844}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatal(err)
		}
		for _, pg := range pages {
			where := pg.name + " at " + size.name
			if err := chromedp.Do(ctx, chromedp.Navigate(base+pg.path), chromedp.WaitVisible(chromedp.CSS("main h1"))); err != nil {
				t.Fatalf("load %s: %v", where, err)
			}
			if !eval(`document.documentElement.scrollWidth <= window.innerWidth`) {
				t.Errorf("%s: the page is wider (%s px) than the screen (%d px): it scrolls sideways", where,
					text(`String(document.documentElement.scrollWidth)`), size.w)
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", where, err)
			}
			out := filepath.Join(dir, fmt.Sprintf("inbox-%s-%s.png", pg.name, size.name))
			if err := os.WriteFile(out, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", out)

			switch pg.name {
			case "list":
				if got := text(`document.querySelector("section.run.needs h2 a").textContent`); got != "r-20260110-plan" {
					t.Errorf("%s: the first run is %q, want the one waiting for approval", where, got)
				}
			case "approval":
				if !eval(`!!document.querySelector("#plan .md h1") && !!document.querySelector("#plan .md table") && document.querySelector("#plan .md pre code") !== null`) {
					t.Errorf("%s: the plan is not rendered from Markdown", where)
				}
				if eval(`window.pwned === 1 || !!document.querySelector('#plan a[href^="javascript"]')`) {
					t.Errorf("%s: the plan's script ran or its javascript: link is a link", where)
				}
				if n := text(`String(document.querySelectorAll(".md h1").length)`); n != "1" {
					t.Errorf("%s: the plan's title is on the page %s times, want once", where, n)
				}
				// Before the button: above it, or (wide) beside it, on its left.
				before := `(() => { const p = document.getElementById("plan").getBoundingClientRect(), a = document.getElementById("approve").getBoundingClientRect();
					return p.bottom <= a.top || (p.right <= a.left && p.top <= a.top); })()`
				if !eval(before) {
					t.Errorf("%s: the plan is not before the Approve button", where)
				}
				if size.name == "wide" && !eval(`document.getElementById("approve").getBoundingClientRect().bottom <= window.innerHeight`) {
					t.Errorf("%s: the Approve button is not in view beside the plan", where)
				}
			case "question":
				if !eval(`!!document.querySelector("#answer #retry") && !!document.querySelector("#answer #stop") && !!document.querySelector("label[for=guidance]")`) {
					t.Errorf("%s: recovery's question has no Retry and Stop with a labelled guidance", where)
				}
			case "running", "stopped", "completed":
				id := strings.TrimPrefix(pg.path, "/runs/")
				if got := text(`document.getElementById("branch").textContent`); !strings.Contains(got, "gaffer/"+id) {
					t.Errorf("%s: the branch line says %q, want gaffer/%s", where, got, id)
				}
			}
			switch pg.name {
			case "stopped":
				if got := text(`document.querySelector(".last-error").textContent`); !strings.Contains(got, "529 overloaded") {
					t.Errorf("%s: the last error says %q", where, got)
				}
			case "question", "running", "completed":
				card := text(`document.querySelector("#phase-1 .review.rejected").textContent`)
				if !strings.Contains(card, "Review rejected") || !strings.Contains(card, "int64 wraps silently") || !strings.Contains(card, "Add still wraps") {
					t.Errorf("%s: phase 1's card shows the rejection as %q", where, card)
				}
			}
			if pg.name != "completed" {
				continue
			}
			if got := text(`document.getElementById("branch").textContent`); !strings.Contains(got, "gaffer merge r-20260110-done") {
				t.Errorf("%s: the branch line does not give the merge command: %q", where, got)
			}
			if !eval(`!!document.querySelector("#phase-1 .review.approved")`) {
				t.Errorf("%s: phase 1's card lacks the approval that followed the rejection", where)
			}
			files := text(`Array.from(document.querySelectorAll("#phase-1 .file-head code")).map(e => e.textContent).join(",")`)
			if files != "calc/calc.go,calc/calc_test.go,calc/old.go" {
				t.Errorf("%s: the diff's file blocks are %q, want one per file outside the execution directory", where, files)
			}
			marked := `(() => { const a = document.querySelectorAll("#phase-1 .ln.add"), d = document.querySelectorAll("#phase-1 .ln.del");
				if (!a.length || !d.length) return false;
				const ga = a[0].querySelector(".g").textContent, gd = d[0].querySelector(".g").textContent;
				const ca = getComputedStyle(a[0]).backgroundColor, cd = getComputedStyle(d[0]).backgroundColor;
				return ga === "+" && gd === "-" && ca !== cd && ca !== "rgba(0, 0, 0, 0)"; })()`
			if !eval(marked) {
				t.Errorf("%s: the diff's added and removed lines are not marked by gutter and colour", where)
			}
		}
	}
}
