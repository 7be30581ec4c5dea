package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
	"github.com/gaffer-dev/gaffer/workspace"
)

// expandingScript writes the demo's script with two expansions of an
// earlier phase's records (issue 37 item 7): one by phase 2's lane of task
// 2a (a lane's session) and one by phase 3's single session.
func expandingScript(t *testing.T, script string) string {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, anchor := range []string{
		"    summary: Implemented Add and Sub.\n    methods: [\"Add(a, b int) int\", \"Sub(a, b int) int\"]\n    actions:\n",
		"    summary: Wrote failing tests for Eval.\n",
	} {
		i := strings.Index(s, anchor)
		if i < 0 {
			t.Fatalf("the demo script has no %q", anchor)
		}
		j := i + len(anchor)
		if !strings.HasSuffix(anchor, "actions:\n") {
			k := strings.Index(s[j:], "    actions:\n")
			if k < 0 {
				t.Fatalf("no actions after %q", anchor)
			}
			j += k + len("    actions:\n")
		}
		s = s[:j] + "      - expand_context: 1\n" + s[j:]
	}
	out := filepath.Join(filepath.Dir(script), "script-expand.yaml") // beside plan.md, which it names
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStoryShowAndExpansionsThroughBinary (issue 37 item 7, seed 004): a
// run whose sessions expand phase 1's records says how many times at its
// end; gaffer story show prints phase N's records as expand_context
// returns them, from the work tree and, once that is gone, from the run's
// commits; a phase or run it does not have is exit 8 in one line, a
// missing --phase exit 2; and serve's metrics count the expansions of a
// lane's session and a single session.
func TestStoryShowAndExpansionsThroughBinary(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	script = expandingScript(t, script)
	const id = "r-20260101-story"
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Story expansions: 2 ") {
		t.Errorf("the run's end summary does not count its two expansions:\n%s", out)
	}
	v, _ := statusOf(t, bin, dir, id)
	if v.WorkTree == "" || v.Branch == "" {
		t.Fatalf("the run worked in place: %+v", v)
	}
	// The run has ended, so its tree is gone: the records come from its
	// branch, as a checkout of it has them.
	ref := filepath.Join(t.TempDir(), "ref")
	gitOut(t, dir, "worktree", "add", "--detach", ref, v.Branch)
	label := filepath.ToSlash(filepath.Join(v.ExecDir, "story"))
	records := func(root string, phase int) string {
		t.Helper()
		text, err := agent.PhaseRecords(filepath.Join(root, v.ExecDir, "story"), label, phase, "")
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	want := records(ref, 1)
	got, code := gafferCmd(t, bin, "--repo", dir, "story", "show", id, "--phase", "1")
	if code != 0 || got != want {
		t.Fatalf("story show --phase 1: exit %d\n%s\nwant the text expand_context returns:\n%s", code, got, want)
	}
	for _, s := range []string{"Decision records of phase 1:", label + "/001-developer-p1-a1.json", "TestAddSub(t *testing.T)", "NOT TODO: implement anything in this phase"} {
		if !strings.Contains(got, s) {
			t.Errorf("story show --phase 1 lacks %q", s)
		}
	}
	if got, code := gafferCmd(t, bin, "--repo", dir, "story", "show", id, "--phase", "2"); code != 0 || got != records(ref, 2) || !strings.Contains(got, "Implemented Add and Sub.") {
		t.Errorf("story show --phase 2: exit %d\n%s", code, got)
	}
	// The newest run without RUN; the phase from GAFFER_PHASE as every flag.
	if got, code := gafferCmd(t, bin, "--repo", dir, "story", "show", "--phase=1"); code != 0 || got != want {
		t.Errorf("story show without RUN: exit %d\n%s", code, got)
	}

	// Refusals: one line each, the documented exit codes.
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"story", "show", id, "--phase", "9"}, ExitPrecondition, "--phase takes 1 to 4"},
		{[]string{"story", "show", "r-20260101-nosuch", "--phase", "1"}, ExitPrecondition, "r-20260101-nosuch"},
		{[]string{"story", "show", id}, ExitUsage, "needs --phase N"},
	} {
		out, code := gafferCmd(t, bin, append([]string{"--repo", dir}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.say) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s", c.args, code, c.code, c.say, out)
		}
		if c.code == ExitPrecondition && strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("%v: not one line:\n%s", c.args, out)
		}
	}

	// serve's metrics count both expansions of a run it executes.
	s := startServe(t, bin, dir)
	const detached = "r-20260101-storym"
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--detach", "--plan", plan, "--script", script, "--run-id", detached, "--auto-approve"); code != 0 {
		t.Fatalf("run --detach: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, detached, "completed", s)
	if m := regexp.MustCompile(`(?m)^gaffer_story_expansions_total (\S+)$`).FindStringSubmatch(scrape(t, s.metrics)); m == nil || m[1] != "2" {
		t.Errorf("gaffer_story_expansions_total = %v, want 2", m)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, s.output())
	}
}

// TestStoryShowReadsTheRunningTree: while a run's work tree is there (a
// run still running: an ended run's tree is swept), story show reads its
// story directory, records not committed yet included, and a link planted
// there is no record; a phase whose records nothing holds is exit 8.
func TestStoryShowReadsTheRunningTree(t *testing.T) {
	t.Parallel()
	dir, _, _ := demoRepo(t)
	repo, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	const execDir = "docs/gaffer/x"
	sd := filepath.Join(tree, execDir, "story")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	r := story.Record{Seq: 1, Role: "developer", Phase: 1, Attempt: 1, Summary: "Not committed yet."}
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(sd, r.Name()), string(data))
	if err := os.Symlink("/etc/passwd", filepath.Join(sd, "002-developer-p1-a2.json")); err != nil {
		t.Fatal(err)
	}
	snap := graph.Snapshot[state.ExecutionState]{RunID: "r-20260101-tree", State: state.ExecutionState{
		Run:      state.RunInfo{ID: "r-20260101-tree", ExecDir: execDir, WorkTree: tree},
		Progress: state.Progress{Phases: []state.PhaseState{{Index: 0, Status: state.PhaseRunning}, {Index: 1}}},
	}}
	cmd := func(a ...string) string { return "gaffer " + strings.Join(a, " ") }
	var out bytes.Buffer
	if err := StoryShow(context.Background(), &out, repo, snap, 1, cmd); err != nil {
		t.Fatal(err)
	}
	want := "Decision records of phase 1:\n\n" + execDir + "/story/" + r.Name() + ":\n" + string(data)
	if out.String() != want {
		t.Errorf("story show --phase 1:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := StoryShow(context.Background(), &out, repo, snap, 2, cmd); err != nil || out.String() != "phase 2 has no decision records\n" {
		t.Errorf("phase 2: %v, %q", err, out.String())
	}
	// The tree gone and no commit of the run: nothing holds the records.
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	err = StoryShow(context.Background(), &out, repo, snap, 1, cmd)
	if ExitCode(err) != ExitPrecondition || !strings.Contains(err.Error(), "phase 1's records are neither in its work tree nor in a commit") {
		t.Errorf("tree gone: exit %d, %v", ExitCode(err), err)
	}
}
