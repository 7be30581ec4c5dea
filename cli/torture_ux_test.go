package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// finishedInPlace makes a demo repository and runs its plan there to the
// end as runID, in place: the fork of a run in place checks its branch out
// in the user's checkout (a run in its own work tree forks into a work
// tree). It returns the repository.
func finishedInPlace(t *testing.T, bin, runID string) string {
	t.Helper()
	dir, plan, script := demoRepo(t)
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", runID, "--in-place"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	return dir
}

// forkSeq returns the seq of the checkpoint before the nth review of
// runID (oldest first), from `gaffer history --json`.
func forkSeq(t *testing.T, bin, dir, runID string, nth int) uint64 {
	t.Helper()
	out, code := gafferCmd(t, bin, "--repo", dir, "history", runID, "--json")
	if code != 0 {
		t.Fatalf("history: exit %d\n%s", code, out)
	}
	var hist []struct {
		Seq  uint64   `json:"seq"`
		Next []string `json:"next"`
	}
	if err := json.Unmarshal([]byte(out), &hist); err != nil {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	reviews := 0
	for i := len(hist) - 1; i >= 0; i-- {
		if len(hist[i].Next) == 1 && hist[i].Next[0] == "review" {
			if reviews++; reviews == nth {
				return hist[i].Seq
			}
		}
	}
	t.Fatalf("no checkpoint before review %d:\n%s", nth, out)
	return 0
}

// forkRun forks runID at seq with the real binary and returns the new id.
func forkRun(t *testing.T, bin, dir, runID string, seq uint64) string {
	t.Helper()
	out, code := gafferCmd(t, bin, "--repo", dir, "fork", runID, "--from", strconv.FormatUint(seq, 10))
	m := regexp.MustCompile(`as (r-\S+), on branch`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("fork: exit %d\n%s", code, out)
	}
	return m[1]
}

// TestForkKeepsTheUsersUntrackedFiles forks a finished demo run in the
// middle of phase 3 while the user has untracked files (one at the top,
// one in a new directory), twice, and resumes the second fork: the phase
// that runs again must keep the user's files and the first fork's
// execution directory, as fork promises, and commit none of them. The
// phase's untracked snapshot was the parent's, so the fresh session's
// reset deleted them.
func TestForkKeepsTheUsersUntrackedFiles(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const parentID = "r-20260101-parent"
	dir := finishedInPlace(t, bin, parentID) // the fork checks out among the user's untracked files
	seq := forkSeq(t, bin, dir, parentID, 4)
	writeTestFile(t, filepath.Join(dir, "notes.txt"), "mine\n")
	if err := os.Mkdir(filepath.Join(dir, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "mine", "deep.txt"), "mine too\n")
	first := forkRun(t, bin, dir, parentID, seq)
	firstState, _ := statusOf(t, bin, dir, first)
	second := forkRun(t, bin, dir, parentID, seq)
	if out, code := gafferCmd(t, bin, "--repo", dir, "resume", second); code != 0 {
		t.Fatalf("resume %s: exit %d\n%s", second, code, out)
	}
	for _, p := range []string{"notes.txt", filepath.Join("mine", "deep.txt"), filepath.Join(firstState.ExecDir, "plan.md")} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("resuming the fork lost the untracked %s: %v", p, err)
		}
	}
	if got := gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(got, "notes.txt") ||
		strings.Contains(got, "deep.txt") || strings.Contains(got, firstState.ExecDir) {
		t.Errorf("the fork committed untracked files that are not its own:\n%s", got)
	}
}

// TestCommandsOnARepositoryWithoutAStoreCreateNone runs every command
// that needs a run in a repository gaffer never ran in (a careless user
// in the wrong directory): each says there is no run, with status's line,
// and leaves no store behind (.git/gaffer and its neighbours).
func TestCommandsOnARepositoryWithoutAStoreCreateNone(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"a.txt": "a\n"})
	for _, args := range [][]string{
		{"resume"}, {"resume", "r-x"}, {"approve"}, {"reject", "r-x", "--feedback", "no"}, {"cancel"}, {"cancel", "r-x"},
		{"delete", "r-x", "--yes"}, {"fork", "r-x", "--from", "3"}, {"prune", "--yes"},
	} {
		out, code := gafferCmd(t, bin, append([]string{"--repo", dir}, args...)...)
		want := ExitPrecondition
		if args[0] == "prune" {
			want = ExitOK
		}
		if code != want || !strings.Contains(out, "no runs in this repository (no store at ") {
			t.Errorf("gaffer %v: exit %d, want %d and status's line\n%s", args, code, want, out)
		}
		if got := gitOut(t, dir, "status", "--porcelain", "--ignored"); got != "" {
			t.Errorf("gaffer %v changed the tree:\n%s", args, got)
		}
		ents, err := os.ReadDir(filepath.Join(dir, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "gaffer") {
				t.Errorf("gaffer %v left .git/%s", args, e.Name())
				os.RemoveAll(filepath.Join(dir, ".git", e.Name()))
			}
		}
	}
}

// TestLogsFollowOfAKilledRunStops: `gaffer logs RUN --follow` follows a
// paced run that is then killed with SIGKILL (so the run never writes its
// end): it must stop by itself, saying that no process runs the run and
// how to continue it, instead of waiting forever.
func TestLogsFollowOfAKilledRunStops(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	run := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve",
		"--run-id", "r-killed", "--pace", "300ms"}, "")
	logs := filepath.Join(dir, ".git", "gaffer.logs", "r-killed")
	for i := 0; ; i++ {
		if m, _ := filepath.Glob(filepath.Join(logs, "*.jsonl")); len(m) > 0 {
			break
		}
		if i > 600 {
			t.Fatal("the run recorded no session")
		}
		time.Sleep(100 * time.Millisecond)
	}
	follow := startProc(t, bin, []string{"--repo", dir, "logs", "r-killed", "--follow"}, "")
	if !run.killAt("random", 500*time.Millisecond) {
		t.Fatal("the run ended before it was killed")
	}
	out, code, ended := follow.waitWithin(60 * time.Second)
	if !ended {
		t.Fatalf("logs --follow of a killed run did not stop:\n%s", out)
	}
	if code != 0 || !strings.Contains(out, "── developer, phase 1") || !strings.Contains(out, "no process is running run r-killed") ||
		!strings.Contains(out, "gaffer resume r-killed") {
		t.Fatalf("logs --follow: exit %d\n%s", code, out)
	}
}

// TestAgentReportsCarryNoKey: an agent that finds the run's key (an
// ANTHROPIC_API_KEY the profile names) and repeats it in its report — its
// summary, its story's decisions, the reviewer's comments — must not put
// it in the status, the store, the transcripts or any commit. The
// transcripts were redacted, but the script driver's report, and the llm
// driver's story facts, reached the state and the committed story records
// and summaries as they were.
func TestAgentReportsCarryNoKey(t *testing.T) {
	const key = "sk-ant-FAKE-canary-7c3d9e1f2a"
	bin := gafferBinary(t)
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"a.txt": "a\n"})
	tmp := t.TempDir()
	plan, script := filepath.Join(tmp, "plan.md"), filepath.Join(tmp, "script.yaml")
	writeTestFile(t, plan, "# Plan: k\n\n### Task 1: do\n")
	writeTestFile(t, script, `developer:
  - phase: 1
    summary: "found key `+key+` in .env"
    decisions:
      - {topic: key, what: "use `+key+`", why: "it was there"}
    commands: ["NOT TODO: print `+key+`"]
    actions:
      - write: {path: b.txt, content: "b"}
reviewer:
  - phase: 1
    approved: true
    comments: "ok `+key+`"
`)
	writeTestFile(t, filepath.Join(dir, "gaffer.yaml"), `default_profile: a
profiles:
  a:
    driver: script
    provider: {name: anthropic, api_key_env: ANTHROPIC_API_KEY}
`)
	t.Setenv("ANTHROPIC_API_KEY", key)
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-key")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	places := map[string]string{"run's output": out}
	places["status --json"], _ = gafferCmd(t, bin, "--repo", dir, "status", "r-key", "--json")
	places["logs"], _ = gafferCmd(t, bin, "--repo", dir, "logs", "r-key")
	places["history --json"], _ = gafferCmd(t, bin, "--repo", dir, "history", "r-key", "--json")
	places["git log -p"] = gitOut(t, dir, "log", "-p", "--all")
	if !strings.Contains(places["logs"], "found key [redacted ANTHROPIC_API_KEY]") {
		t.Fatalf("logs do not show the redacted summary: the test does not test anything\n%s", places["logs"])
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), key) {
			t.Errorf("the key is in %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range places {
		if strings.Contains(text, key) {
			t.Errorf("the key is in %s", name)
		}
	}
}
