package cli

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/host"
)

// The tests of issue 35, items 5 to 8, through the binary.

// TestMissingScriptIsListedWithThePlansProblems (item 5): a missing
// --script hides nothing: it is named by its flag among the plan's
// problems, and nothing is written.
func TestMissingScriptIsListedWithThePlansProblems(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, _ := demoRepo(t)
	bad := writePlan(t, "# Bad\n\n### Task 1: x\n- type: impl\n- depends on: 9\n")
	nope := filepath.Join(t.TempDir(), "nope.yaml")
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", bad, "--script", nope)
	want := "gaffer: the run cannot start, 3 problems:\n" +
		"  --script " + nope + ": no such file\n" +
		"  " + bad + ":3: task 1 is an impl task with no test task in its dependency chain (write the tests first, or turn the TDD check off)\n" +
		"  " + bad + ":5: task 1 depends on unknown task 9\n"
	if code != ExitUsage || out != want {
		t.Errorf("run --plan bad.md --script nope.yaml: exit %d\n%s\nwant exit 2 and\n%s", code, out, want)
	}
	// A directory given as the plan is named by its flag too.
	out, code = gafferCmd(t, bin, "--repo", dir, "run", "--plan", t.TempDir(), "--script", nope)
	if code != ExitUsage || !strings.Contains(out, "\n  --plan ") || !strings.Contains(out, ": is a directory\n  --script "+nope+": no such file\n") {
		t.Errorf("run --plan DIR --script nope.yaml: exit %d\n%s", code, out)
	}
	noStore(t, dir)
}

// TestHelpNeedsNoSourceTree (item 6): the script's format is in the
// binary (gaffer help script-format), run's help points there and says
// which driver is the default, and a bare `gaffer run` points to run's
// own help.
func TestHelpNeedsNoSourceTree(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	elsewhere := t.TempDir() // no source tree, no repository
	out, code := gafferIn(t, bin, elsewhere, "help", "script-format")
	if code != ExitOK || out != script.Format || !strings.HasPrefix(out, "# The script driver's format\n") {
		t.Errorf("help script-format: exit %d, %d bytes, want the format (%d bytes)", code, len(out), len(script.Format))
	}
	if strings.Contains(script.Format, "in the README") || !strings.Contains(script.Format, "docs/formats.md") {
		t.Error("SCRIPT-FORMAT.md sends the plan format's reader to the README, or not to docs/formats.md")
	}
	if b, err := os.ReadFile("../docs/formats.md"); err != nil || !strings.Contains(string(b), "\n## The plan format\n") {
		t.Errorf("docs/formats.md has no plan format section for SCRIPT-FORMAT.md's link: %v", err)
	}
	help, code := gafferIn(t, bin, elsewhere, "run", "--help")
	if code != ExitOK || strings.Contains(help, "SCRIPT-FORMAT.md") || !strings.Contains(help, "(its format: gaffer help script-format)") ||
		!strings.Contains(help, "(default: the profile's, script unless gaffer.yaml names another)") {
		t.Errorf("run --help:\n%s", help)
	}
	if out, _ := gafferIn(t, bin, elsewhere, "--help"); !strings.Contains(out, "script-format") {
		t.Errorf("--help does not name the help topic:\n%s", out)
	}
	dir, _, _ := demoRepo(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "gaffer: give --plan FILE or --goal TEXT\nRun 'gaffer run --help' for usage.\n"},
		{[]string{"plan", "validate"}, "gaffer: plan validate: missing FILE\nRun 'gaffer plan validate --help' for usage.\n"},
		{[]string{"status", "--bogus"}, "gaffer: flag provided but not defined: -bogus\nRun 'gaffer status --help' for usage.\n"},
		{[]string{"bogus"}, "gaffer: unknown command \"bogus\"\nRun 'gaffer --help' for usage.\n"},
		{[]string{"help", "bogus"}, "gaffer: no command or help topic \"bogus\" (topics: script-format)\nRun 'gaffer --help' for usage.\n"},
	} {
		out, code := gafferIn(t, bin, dir, c.args...)
		if code != ExitUsage || out != c.want {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, out, c.want)
		}
		// The help it points to is there.
		helpArgs := strings.Fields(strings.TrimSuffix(c.want[strings.LastIndex(c.want, "Run '")+5:], "' for usage.\n"))[1:]
		if out, code := gafferIn(t, bin, dir, helpArgs...); code != ExitOK || !strings.Contains(out, "USAGE:") {
			t.Errorf("%v, as pointed to: exit %d\n%s", helpArgs, code, out)
		}
	}
}

// TestInboxAfterMergeOffersNoMerge (item 7): a completed run's page
// offers `gaffer merge`; once merged, it says the work is in the user's
// branch and offers it no more, as status does.
func TestInboxAfterMergeOffersNoMerge(t *testing.T) {
	t.Parallel()
	const runID = "r-20260101-inbox-merge"
	s, bin, dir, base := startInbox(t, runID)
	if out, code := gafferCmd(t, bin, "--repo", dir, "approve", runID); code != ExitOK {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, runID, "completed", s)
	page := func() string {
		t.Helper()
		resp, err := http.Get(base + "runs/" + runID)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if body := page(); !strings.Contains(body, `<code class="cmd">gaffer merge `+runID+`</code>`) {
		t.Fatalf("the completed run's page offers no merge:\n%s", body)
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "merge", runID); code != ExitOK {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	body := page()
	if strings.Contains(body, "gaffer merge") || !strings.Contains(body, "Branch <code>gaffer/"+runID+"</code>: its work is in your current branch.") {
		t.Errorf("the merged run's page:\n%s", body)
	}
	if st, _ := gafferCmd(t, bin, "--repo", dir, "status", runID); strings.Contains(st, "merge:") {
		t.Errorf("status offers a merge of a merged run:\n%s", st)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("serve: exit %d\n%s", code, s.output())
	}
}

// TestInboxLabelsRecoverysQuestion (item 8): a run waiting on recovery's
// question is labelled awaiting_decision, not awaiting_approval, on the
// list and on its page, which asks for a decision and no plan approval.
func TestInboxLabelsRecoverysQuestion(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, sp := replanRepo(t, narrowReplan)
	const id = "r-20260101-ask"
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", id); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	s := startServe(t, bin, dir, "--ui-addr", "127.0.0.1:0")
	if !waitFor(func() bool { return inboxBanner.MatchString(s.output()) }) {
		t.Fatalf("serve names no inbox:\n%s", s.output())
	}
	base := inboxBanner.FindStringSubmatch(s.output())[1]
	for _, path := range []string{"", "runs/" + id} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if !strings.Contains(body, `<span class="status awaiting_approval needs">awaiting_decision</span>`) || strings.Contains(body, ">awaiting_approval<") {
			t.Errorf("/%s labels the question:\n%s", path, body)
		}
		if path != "" && (!strings.Contains(body, "Recovery asks: phase 2") || strings.Contains(body, "Approve the plan?")) {
			t.Errorf("the page of a run waiting on recovery's question:\n%s", body)
		}
	}
}

// TestStatusJSONPhasesCarryRejections (item 8): the demo's phase 2 is
// rejected once, then approved: status --json keeps the rejection.
func TestStatusJSONPhasesCarryRejections(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-rej"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	v, _ := statusOf(t, bin, dir, "r-rej")
	p2 := v.Phases[1]
	if len(p2.Rejections) != 1 || p2.Rejections[0].Attempt != 1 || p2.Rejections[0].Review.Approved ||
		!strings.Contains(p2.Rejections[0].Review.Comments, "strconv") || p2.Review == nil || !p2.Review.Approved {
		t.Errorf("phase 2 of status --json: rejections %+v, review %+v", p2.Rejections, p2.Review)
	}
	if len(v.Phases[0].Rejections) != 0 {
		t.Errorf("phase 1 was never rejected: %+v", v.Phases[0].Rejections)
	}
}

// TestLogsOfAPhaseWithoutASessionSaysSo (item 8): `logs --phase N` of a
// phase that has not run is exit 8 with the command that waits for it,
// not exit 0 and nothing; beyond the run's phases it is exit 2; a run
// given --plan has no architect's session.
func TestLogsOfAPhaseWithoutASessionSaysSo(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	const id = "r-logs"
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", id, "--pace", "0s"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	// Nothing has run: no transcript at all.
	if out, code := gafferIn(t, bin, dir, "logs", "--phase", "2"); code != ExitPrecondition || !strings.Contains(out, "no agent sessions recorded") {
		t.Errorf("logs --phase 2 before anything ran: exit %d\n%s", code, out)
	}
	if out, code := gafferIn(t, bin, dir, "approve", id); code != ExitOK {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	// Phase 1 ran; a fresh run waiting at approval has no phase 1 yet.
	if out, code := gafferIn(t, bin, dir, "run", "--plan", plan, "--script", script, "--run-id", "r-logs2"); code != ExitAwaitingApproval {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	out, code := gafferIn(t, bin, dir, "logs", "r-logs2", "--phase", "1")
	want := "gaffer: run r-logs2 has no agent session of phase 1 (it is pending) recorded yet; gaffer logs r-logs2 --phase 1 --follow waits for one\n"
	if code != ExitPrecondition || out != want {
		t.Errorf("logs --phase 1 of a phase not started: exit %d, %q; want exit 8 and %q", code, out, want)
	}
	if out, code := gafferIn(t, bin, dir, "logs", "r-logs2", "--phase", "9"); code != ExitUsage || !strings.Contains(out, "--phase 9: run r-logs2 has 4 phases") {
		t.Errorf("logs --phase 9: exit %d\n%s", code, out)
	}
	if out, code := gafferIn(t, bin, dir, "logs", id, "--phase", "0"); code != ExitPrecondition || !strings.Contains(out, "has no architect session recorded (a run given --plan has none)") {
		t.Errorf("logs --phase 0 of a run given --plan: exit %d\n%s", code, out)
	}
	if out, code := gafferIn(t, bin, dir, "logs", id, "--phase", "1"); code != ExitOK || !strings.Contains(out, "── developer, phase 1, task 1a, attempt 1, iteration 1 ──") { // the demo's phase 1 has two lanes
		t.Errorf("logs --phase 1 of a phase that ran: exit %d\n%s", code, out)
	}
}

// TestCompletionOffersGlobalFlagsAfterACommand (item 8): after a
// command, its flags and the global ones (which work there) are offered.
func TestCompletionOffersGlobalFlagsAfterACommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"status", "--"}, []string{"--json", "--repo", "--store", "--watch", "--interval", "--profile", "--log-level", "--log-format"}},
		{[]string{"fork", "--"}, []string{"--from", "--remote", "--repo", "--store", "--profile", "--log-level", "--log-format"}},
		{[]string{"plan", "show", "--lo"}, []string{"--log-level", "--log-format"}},
		{[]string{"--"}, []string{"--repo", "--store", "--profile", "--log-level", "--log-format", "--help", "--version"}},
	} {
		out, _, code := run(t, append([]string{"__complete"}, c.words...)...)
		got := strings.Fields(out)
		if code != ExitOK || !sameSet(got, c.want) {
			t.Errorf("complete %q: %q, want %q", c.words, got, c.want)
		}
	}
	// Through bash and the binary, as TAB does.
	_, env, cwd := shellSetup(t)
	bash := requireShell(t, "bash")
	cmd := exec.Command(bash, "--norc", "-c", `source <(gaffer completion bash); COMP_WORDS=(gaffer approve --log); COMP_CWORD=2; _gaffer; printf '%s\n' "${COMPREPLY[@]}"`)
	cmd.Dir, cmd.Env = cwd, env
	got, err := cmd.CombinedOutput()
	if err != nil || !sameSet(strings.Fields(string(got)), []string{"--log-level", "--log-format"}) {
		t.Errorf("bash completes `gaffer approve --log`: %v, %q", err, got)
	}
}

// TestReadCommandsDeliverNoNotices (item 8): a notice left undelivered
// (the run was killed before it sent it) is not delivered by list or
// status, which only read the store (and would walk every run's outbox
// to do it); the next process that drives a run delivers it.
func TestReadCommandsDeliverNoNotices(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	env := []string{"GAFFER_TEST_HOOK_SECRET=" + notifySecret}
	h := newHooks(t)
	dir, plan, script, _ := notifyRepo(t, h)
	const id = "r-20260101-quiet"
	runKilledBeforeNotice(t, bin, env, dir, plan, script, id)
	for _, args := range [][]string{{"list"}, {"list", "--json"}, {"status"}, {"status", id, "--json"}, {"history"}, {"plan", "show"}} {
		if out, code := gafferCmdEnv(t, bin, env, append([]string{"--repo", dir}, args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	if keys, bad, ntfy := h.got(); len(keys)+len(bad)+len(ntfy) != 0 {
		t.Fatalf("a read command delivered notices: %v %v %v", keys, bad, ntfy)
	}
	if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "resume"); code != ExitAwaitingApproval {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	if keys, _, _ := h.got(); !slices.Equal(keys, []string{id + ":1 awaiting_approval"}) {
		t.Fatalf("after resume the webhook got %v", keys)
	}
}

// TestSubmitSaysWhereTheRunsWorkGoes (item 8): run --detach and submit
// print the run's start lines themselves (where its work goes, the
// uncommitted changes it starts without), as a run started here does,
// with commands that work from where they were typed.
func TestSubmitSaysWhereTheRunsWorkGoes(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	s := startServe(t, bin, dir)
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte("package calc // edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, ".git", "gaffer")
	for i, how := range [][]string{{"submit"}, {"run", "--detach"}} {
		id := []string{"r-20260101-sub", "r-20260101-det"}[i]
		args := append(append([]string{"--repo", dir}, how...), "--plan", plan, "--script", script, "--run-id", id)
		out, code := gafferCmd(t, bin, args...)
		where := "Its work goes to branch gaffer/" + id + " (work tree " + filepath.Join(host.WorkTreesDir(store), id) +
			"), not to your checkout: when it is done, gaffer --repo " + dir + " merge " + id + " takes it into main."
		left := "Your uncommitted changes to doc.go are not in this run: it starts from HEAD without them " +
			"(commit them first, or run with --in-place --allow-dirty to work on them)."
		if code != ExitOK || !strings.Contains(out, "\n"+where+"\n"+left+"\n") || !strings.HasSuffix(out, "  watch:  gaffer --repo "+dir+" status "+id+" --watch\n") {
			t.Errorf("%v: exit %d\n%s\nwant the lines\n%s\n%s", how, code, out, where, left)
		}
		v := waitStatus(t, bin, dir, id, "awaiting_approval", s)
		if v.WorkTree != filepath.Join(host.WorkTreesDir(store), id) {
			t.Errorf("the line named work tree %s; the run's is %s", filepath.Join(host.WorkTreesDir(store), id), v.WorkTree)
		}
	}
}
