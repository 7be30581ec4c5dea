package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/runview"
)

// longLines returns the lines of out wider than cols runes.
func longLines(out string, cols int) []string {
	var long []string
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > cols {
			long = append(long, l)
		}
	}
	return long
}

// TestStoppedRunKeepsWhy (issue 23 item 6): a run stopped by an error
// (approve exits 9: its script is gone) keeps why in the store: status in
// another process prints it on one line, status --json and list --json
// carry it in last_error, list marks the run stopped in a short cell;
// once the run goes on and completes, the error is gone.
func TestStoppedRunKeepsWhy(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-why"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	moved := script + ".away"
	if err := os.Rename(script, moved); err != nil {
		t.Fatal(err)
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "approve"); code != ExitStopped {
		t.Fatalf("approve with the script gone: exit %d, want %d\n%s", code, ExitStopped, out)
	}
	const cause = "load script: open " // the driver's error, as approve printed it
	out, code := gafferCmd(t, bin, "--repo", dir, "status")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "last error: ") {
			line = l
		}
	}
	if code != ExitOK || !strings.Contains(line, cause) || !strings.HasSuffix(line, moved[:len(moved)-len(".away")]+": no such file or directory") {
		t.Fatalf("status after exit 9: exit %d, want one line \"last error: …%s…\":\n%s", code, cause, out)
	}
	v := statusJSON(t, "--repo", dir)
	if !v.Stopped || "last error: "+v.LastError != line {
		t.Fatalf("status --json: stopped %v, last_error %q, want %q", v.Stopped, v.LastError, line)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "list", "--json")
	var vs []runview.Run
	if err := json.Unmarshal([]byte(out), &vs); code != 0 || err != nil || len(vs) != 1 || vs[0].LastError != v.LastError {
		t.Fatalf("list --json: exit %d, %v, want last_error %q:\n%s", code, err, v.LastError, out)
	}
	out, _ = gafferCmd(t, bin, "--repo", dir, "list")
	rows := strings.Split(out, "\n")
	if len(rows) < 2 || strings.Join(strings.Fields(rows[1])[:3], " ") != "r-why stopped 1/4" || !strings.Contains(out, "\nstopped: no process runs it; gaffer status RUN says why") {
		t.Errorf("list, want r-why stopped in phase 1/4 and the footnote:\n%s", out)
	}

	// Stopped again at the same checkpoint for another cause: status
	// shows the newer one.
	writeTestFile(t, script, "developer: [\n")
	if out, code := gafferCmd(t, bin, "--repo", dir, "resume"); code != ExitStopped {
		t.Fatalf("resume with a broken script: exit %d, want %d\n%s", code, ExitStopped, out)
	}
	if v2 := statusJSON(t, "--repo", dir); v2.LastError == v.LastError || v2.LastError == "" || strings.Contains(v2.LastError, "\n") {
		t.Fatalf("status --json after a second stop: last_error %q, want a newer one line than %q", v2.LastError, v.LastError)
	}

	if err := os.Rename(moved, script); err != nil {
		t.Fatal(err)
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "resume"); code != ExitOK || !regexp.MustCompile(`Resuming run r-why from checkpoint \d+; next: phase 1 of 4 \(attempt 1\) in 2 lanes\n`).MatchString(out) {
		t.Fatalf("resume: exit %d, want the next step in the user's words\n%s", code, out)
	}
	out, _ = gafferCmd(t, bin, "--repo", dir, "status")
	if v := statusJSON(t, "--repo", dir); v.LastError != "" || v.Stopped || strings.Contains(out, "last error") {
		t.Errorf("after the run went on: last_error %q, stopped %v\n%s", v.LastError, v.Stopped, out)
	}
}

// TestListFitsAndSaysWhereWorkWent (issue 23 items 1 and 7): list, with
// a 64-character run id and a long goal, keeps every line within 80
// columns off a terminal (termSize's width there is 80); it names each
// run's branch, marks the one that holds work the current branch lacks,
// and status of that finished run prints the merge command. After
// gaffer merge, the mark and the command are gone. The two runs are the
// built binary's: in process, under the race detector and one at a time
// with the other tests' commands, they were most of the test's time.
func TestListFitsAndSaysWhereWorkWent(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	long := strings.Repeat("x", 60) + "-end" // 64 characters, the longest run id
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	goal := "a calculator that evaluates \"a op b\" and explains every one of its answers at great length to the user"
	longPlan := filepath.Join(t.TempDir(), "plan.md")
	writeTestFile(t, longPlan, strings.Replace(string(b), `a calculator that evaluates "a op b"`, goal, 1))
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", longPlan, "--script", script, "--auto-approve", "--run-id", long); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-2"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "list")
	if code != ExitOK || len(longLines(out, 80)) > 0 {
		t.Fatalf("list: exit %d, lines over 80 columns %q:\n%s", code, longLines(out, 80), out)
	}
	// The long id is a line of its own, its cells under it.
	for _, want := range []string{
		"\n" + long + "\n  completed  4/4 ",
		"\n  unmerged: gaffer/r-2 · a calculator that evaluates \"a op b\"\n",
		"\n  unmerged: gaffer/" + long[:20],
		"\nunmerged: its branch holds commits your current branch lacks; gaffer merge RUN\n  takes them.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	out, _ = gaffer(t, "--repo", dir, "list", "--json")
	var vs []runview.Run
	if err := json.Unmarshal([]byte(out), &vs); err != nil || len(vs) != 2 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	for _, v := range vs {
		if v.Branch != "gaffer/"+v.RunID || !v.Unmerged || v.Goal == "" {
			t.Errorf("list --json: %s has branch %q, unmerged %v", v.RunID, v.Branch, v.Unmerged)
		}
	}
	out, _ = gaffer(t, "--repo", dir, "status", "r-2")
	if want := "\nbranch:    gaffer/r-2\nwork tree: removed (the run has ended)\nmerge:     gaffer --repo " + dir + " merge r-2 (takes its work into your current branch)\n"; !strings.Contains(out, want) {
		t.Errorf("status of a finished run with unmerged work, want %q:\n%s", want, out)
	}
	if v := statusJSON(t, "--repo", dir, "r-2"); v.Branch != "gaffer/r-2" || !v.Unmerged {
		t.Errorf("status --json: branch %q, unmerged %v", v.Branch, v.Unmerged)
	}

	if out, code := gaffer(t, "--repo", dir, "merge", "r-2"); code != ExitOK {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	out, _ = gaffer(t, "--repo", dir, "list")
	if !strings.Contains(out, "\n  gaffer/r-2 · a calculator") || strings.Count(out, "  unmerged: gaffer/") != 1 {
		t.Errorf("list after merge r-2, want r-2 merged and the long run not:\n%s", out)
	}
	out, _ = gaffer(t, "--repo", dir, "status", "r-2")
	if strings.Contains(out, "merge:") {
		t.Errorf("status after merge still offers it:\n%s", out)
	}
	if v := statusJSON(t, "--repo", dir, "r-2"); v.Unmerged {
		t.Errorf("status --json after merge: unmerged")
	}
}

// TestHistoryNamesPhasesAndSteps (issue 23 item 7): history has the
// phase and attempt of each checkpoint and names the steps as the user
// knows them (no __start__, __end__ or node names), within 80 columns: the
// checkpoint to fork phase 2's second attempt from reads off it.
func TestHistoryNamesPhasesAndSteps(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-h"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "history")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || !strings.HasPrefix(lines[0], "SEQ  PHASE  ATTEMPT  RAN       NEXT      STATUS     TIME (") || len(longLines(out, 80)) > 0 {
		t.Fatalf("history: exit %d, want its header and lines within 80 columns:\n%s", code, out)
	}
	for _, bad := range []string{"__start__", "__end__", "phased_execution", "next_task", "validator", "architect"} {
		if strings.Contains(out, bad) {
			t.Errorf("history shows %q:\n%s", bad, out)
		}
	}
	rows := map[string]bool{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[strings.Join(f[1:6], " ")] = true
	}
	// The first checkpoint, phase 2's rejected review (its next step is
	// the phase again, attempt 2) and the last.
	for _, want := range []string{"- - start check running", "2/4 2 review phase running", "4/4 3 review end completed"} {
		if !rows[want] {
			t.Errorf("history has no row %q:\n%s", want, out)
		}
	}
}

// TestStatusWatchSaysWhereItLeft (issue 23 item 8d): status --watch left
// with Ctrl-C (a real SIGINT to a real process) ends with one line, the
// run's state, and exits 0.
func TestStatusWatchSaysWhereItLeft(t *testing.T) {
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-w"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	cmd := exec.Command(bin, "--repo", dir, "status", "--watch", "--interval", "50ms")
	var buf syncBuffer // the process writes while the test reads
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(buf.String(), "Phase 4") { // the tree is drawn: the watch is under way
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no tree drawn:\n%s", buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := "Stopped watching: run r-w is awaiting_approval, phase 1 of 4 (checkpoint 3); watching did not change it."
	if err != nil || lines[len(lines)-1] != want {
		t.Fatalf("status --watch after SIGINT: %v, last line %q, want %q\n%s", err, lines[len(lines)-1], want, buf.String())
	}
}

// TestServeShowsWhyARunStopped (issue 23 items 1 and 6, through serve):
// a run stopped on an error (approve exits 9: its script is gone), then
// serve holds the store: status --json, status and list --json, answered
// through serve's socket, carry the run's branch and why it stopped.
func TestServeShowsWhyARunStopped(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-why"
	dir := errorStoppedRun(t, bin, runID) // approve without RUN: the newest run
	s := startServe(t, bin, dir)
	v, _ := statusOf(t, bin, dir, runID)
	if !v.Stopped || !strings.Contains(v.LastError, "load script: open ") || v.Branch != "gaffer/"+runID {
		t.Errorf("status --json through serve: stopped %v, last_error %q, branch %q\nserve:\n%s", v.Stopped, v.LastError, v.Branch, s.output())
	}
	text, _ := gafferCmd(t, bin, "--repo", dir, "status", runID)
	if !strings.Contains(text, "\nlast error: "+v.LastError+"\n") || !strings.Contains(text, "\nbranch:    gaffer/"+runID+"\n") {
		t.Errorf("status through serve:\n%s", text)
	}
	lj, _ := gafferCmd(t, bin, "--repo", dir, "list", "--json")
	var vs []runview.Run
	if err := json.Unmarshal([]byte(lj), &vs); err != nil || len(vs) != 1 || vs[0].LastError != v.LastError || vs[0].Branch != v.Branch {
		t.Errorf("list --json through serve: %v\n%s", err, lj)
	}
}
