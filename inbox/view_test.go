package inbox

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
)

// hostilePlan tries every way a plan could put script or markup on the
// page, beside Markdown that must render.
const hostilePlan = "# Plan\n\nA **bold** step.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n" +
	"[js](javascript:alert(3)) [JS](JAVASCRIPT:alert(4)) [data](data:text/html,<script>alert(5)</script>) " +
	"[vb](vbscript:msgbox) <javascript:alert(6)> [ref]\n\n[ref]: javascript:alert(7)\n\n![img](javascript:alert(8))\n\n" +
	"<a href=\"javascript:alert(9)\">raw</a> <iframe src=\"/\"></iframe> <style>body{display:none}</style>\n\n" +
	"| a | b |\n|---|---|\n| 1 | <b onclick=x>2</b> |\n\n[fine](https://example.com/x)\n"

func TestPlanIsMarkdownWithoutScriptOrUnsafeLinks(t *testing.T) {
	got := string(renderMarkdown(hostilePlan))
	for _, want := range []string{"<h1>Plan</h1>", "<strong>bold</strong>", "<table>", `<a href="https://example.com/x">fine</a>`, "<a>js</a>", "<a>data</a>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the rendered plan lacks %q:\n%s", want, got)
		}
	}
	lower := strings.ToLower(got)
	for _, bad := range []string{"<script", "vbscript:", "data:text", "onerror", "onclick", "<iframe", "<style", "<img src=x", `href=""`} {
		if strings.Contains(lower, bad) {
			t.Errorf("the rendered plan holds %q:\n%s", bad, got)
		}
	}
	// The one address left is the https link's.
	for _, m := range regexp.MustCompile(`(?i)(?:href|src)="([^"]*)"`).FindAllStringSubmatch(got, -1) {
		if !strings.HasPrefix(m[1], "https://") {
			t.Errorf("an address %q is left in the plan:\n%s", m[1], got)
		}
	}
}

// TestApprovalPageShowsThePlanOnceBeforeApprove serves a run waiting for
// approval whose plan is hostile Markdown: the page renders it once, before
// the Approve button, with nothing of its script left.
func TestApprovalPageShowsThePlanOnceBeforeApprove(t *testing.T) {
	s, svc := newTest(t, "")
	for i, r := range svc.runs {
		if r.Snapshot.RunID == "r-20260102-plan" {
			svc.runs[i].Snapshot.State.Plan.Markdown = hostilePlan
		}
	}
	body := get(t, s, "/runs/r-20260102-plan", fixedCookie(s)).Body.String()
	plan, approve := strings.Index(body, `<strong>bold</strong>`), strings.Index(body, `id="approve"`)
	if plan < 0 || approve < 0 || plan > approve {
		t.Fatalf("the plan (at %d) does not come before the Approve button (at %d):\n%s", plan, approve, body)
	}
	if n := strings.Count(body, "A <strong>bold</strong> step."); n != 1 {
		t.Errorf("the plan is on the page %d times, want once", n)
	}
	if strings.Contains(body, "Table tests.") {
		t.Error("a task's description is repeated beside a plan that has Markdown")
	}
	if strings.Contains(strings.ToLower(body), "javascript:alert(3)") || strings.Contains(body, "<script>alert") {
		t.Errorf("the page holds the plan's script:\n%s", body)
	}
}

func TestCompletedPageNamesBranchMergeAndRejectedReview(t *testing.T) {
	s, _ := newTest(t, "")
	body := get(t, s, "/runs/r-20260101-done", fixedCookie(s)).Body.String()
	for _, want := range []string{"Branch <code>gaffer/r-20260101-done</code>", "<code class=\"cmd\">gaffer merge r-20260101-done</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the completed run's page lacks %q", want)
		}
	}
	card := body[strings.Index(body, `id="phase-2"`):]
	card = card[:strings.Index(card, "</section>")]
	rej, ok := strings.Index(card, `class="review rejected"`), strings.Index(card, `class="review approved"`)
	if rej < 0 || ok < rej || !strings.Contains(card, "✗ Review rejected</span> attempt 1") ||
		!strings.Contains(card, "Add wraps on overflow.") || !strings.Contains(card, "Handle overflow — int64 wraps") {
		t.Errorf("phase 2's card does not show the rejection, then the approval:\n%s", card)
	}
	if list := get(t, s, "/", fixedCookie(s)).Body.String(); !strings.Contains(list, "branch <code>gaffer/r-20260101-done</code>") {
		t.Error("the list does not name the run's branch")
	}
}

// TestStoppedRunShowsItsLastErrorAndBranch: a run stopped by an error
// shows it once, at the top, with when and where it stopped and how to
// continue; an interrupted one (no error kept) says so, its state's last
// error labelled as such; a halted one what halted it.
func TestStoppedRunShowsItsLastErrorAndBranch(t *testing.T) {
	s, svc := newTest(t, "")
	const outage = "nodes: developer session: provider outage (529)"
	st := state.ExecutionState{Run: state.RunInfo{ID: "r-20260105-stop", Goal: "g", ExecDir: "docs/gaffer/stop", WorkTree: "/w/stop"},
		Plan: plan(), Status: state.RunRunning, Errors: []string{"first", outage}}
	st.Progress.Phases = []state.PhaseState{{Index: 0, Status: state.PhaseRunning, Attempt: 2}}
	at := time.Date(2026, 1, 5, 10, 42, 5, 0, time.UTC)
	svc.runs = append(svc.runs, host.RunStatus{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: "r-20260105-stop", Seq: 4, State: st, Time: at},
		Status: "running", Stopped: true, LastError: outage})
	body := get(t, s, "/runs/r-20260105-stop", fixedCookie(s)).Body.String()
	if !strings.Contains(body, `<p class="error last-error"><strong>Stopped by:</strong> `+outage+`</p>`) ||
		!strings.Contains(body, `Stopped at 2026-01-05 10:42:05 UTC during phase 1 (attempt 2); fix the cause, then <code class="cmd">gaffer resume r-20260105-stop</code> continues it.`) {
		t.Errorf("the stopped run's page does not show its last error, when and how to continue:\n%s", body)
	}
	if n := strings.Count(body, outage); n != 1 {
		t.Errorf("the error that stopped the run is on its page %d times, want once", n)
	}
	if !strings.Contains(body, `<li class="error">first</li>`) {
		t.Error("the run's earlier error is not listed")
	}
	if !strings.Contains(body, "Branch <code>gaffer/r-20260105-stop</code>: the run commits its work there") || strings.Contains(body, "gaffer merge") {
		t.Errorf("the running run's page does not name its branch alone:\n%s", body)
	}
	if !strings.Contains(body, `<span class="mark">◌</span> Phase 1`) || strings.Contains(body, "Running") {
		t.Errorf("the stopped run's phase is drawn running:\n%s", body)
	}
	// Interrupted: nothing kept; the state's last error is not what stopped it.
	st.Run.ID = "r-20260107-int"
	svc.runs = append(svc.runs, host.RunStatus{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: st.Run.ID, Seq: 5, State: st, Time: at},
		Status: "running", Stopped: true})
	body = get(t, s, "/runs/r-20260107-int", fixedCookie(s)).Body.String()
	if !strings.Contains(body, `Interrupted at 2026-01-05 10:42:05 UTC during phase 1 (attempt 2); <code class="cmd">gaffer resume r-20260107-int</code> continues it.`) ||
		!strings.Contains(body, `<strong>Last error:</strong> `+outage) || strings.Contains(body, "Stopped by") || strings.Count(body, outage) != 1 {
		t.Errorf("the interrupted run's page:\n%s", body)
	}
	// A halted run shows what halted it at the top too.
	st.Run.ID, st.Status = "r-20260106-halt", state.RunHalted
	st.Errors = []string{"phase 1 halted: the reviewer rejected attempt 2 of 2"}
	svc.runs = append(svc.runs, host.RunStatus{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: st.Run.ID, Seq: 9, State: st}, Status: "halted"})
	body = get(t, s, "/runs/r-20260106-halt", fixedCookie(s)).Body.String()
	if !strings.Contains(body, `<strong>Stopped by:</strong> phase 1 halted: the reviewer rejected attempt 2 of 2</p>`) ||
		!strings.Contains(body, `take the phases it committed into your branch with <code class="cmd">gaffer merge r-20260106-halt</code>`) {
		t.Errorf("the halted run's page does not show what halted it and the merge of its phases:\n%s", body)
	}
}

func TestSplitPatchOneBlockPerFileWithMarkedLines(t *testing.T) {
	const p = "diff --git a/my file.go b/my file.go\nindex 1..2 100644\n--- a/my file.go\n+++ b/my file.go\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n\\ No newline at end of file\n" +
		"diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" +
		"diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n"
	files := splitPatch(p)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"my file.go", "gone.txt", "img.png"}) {
		t.Fatalf("files %q", paths)
	}
	var got []string
	for _, l := range files[0].Lines {
		got = append(got, l.Class+"|"+l.Gutter+"|"+l.Text)
	}
	want := []string{"hunk| |@@ -1,2 +1,2 @@", "ctx| |ctx", "del|-|old", "add|+|new", `meta| |\ No newline at end of file`}
	if !slices.Equal(got, want) {
		t.Errorf("lines of my file.go:\n%q\nwant\n%q", got, want)
	}
	if l := files[1].Lines; len(l) != 3 || l[0].Text != "deleted file mode 100644" || l[2].Class != lineDel {
		t.Errorf("lines of gone.txt: %+v", l)
	}
	if !files[2].Binary {
		t.Error("img.png is not binary")
	}
	// The stat's order, its counts; a file of the stat beyond the patch
	// shown has no lines.
	fs := filesOf([]fileStat{{Path: "gone.txt", Deleted: 1}, {Path: "my file.go", Added: 1, Deleted: 1}, {Path: "cut.go", Added: 9}}, p)
	if len(fs) != 4 || fs[0].Path != "gone.txt" || fs[0].Deleted != 1 || len(fs[0].Lines) != 3 || fs[2].Path != "cut.go" || fs[2].Lines != nil || fs[3].Path != "img.png" {
		t.Errorf("filesOf: %+v", fs)
	}
}
