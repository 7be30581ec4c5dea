package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/workspace"
)

// laneKillPlan's first phase is three lanes (disjoint files), its second
// one task.
const laneKillPlan = `# Plan: three lanes

### Task 1: one
- type: test
- depends on: none
- files: one.txt

### Task 2: two
- type: test
- depends on: none
- files: two.txt

### Task 3: three
- type: test
- depends on: none
- files: three.txt

### Task 4: all
- type: impl
- depends on: 1, 2, 3
- files: all.txt
`

// laneKillScript plays each lane of phase 1 as an agent that says when
// it starts (the script driver prints its actions: "run true
// start-lane-K") and runs a process (agent, a shell script whose command
// line names the test's directory); phase 2 puts the three files
// together.
func laneKillScript(agent string) string {
	var b strings.Builder
	b.WriteString("developer:\n")
	for k, name := range []string{"one", "two", "three"} {
		fmt.Fprintf(&b, `  - phase: 1
    task: "%d"
    summary: wrote %s
    decisions: [{topic: %s, what: "write %s.txt"}]
    actions:
      - run: "true start-lane-%d"
      - wait: 150ms
      - run: "%s %d"
      - write: {path: %s.txt, content: "%s\n"}
`, k+1, name, name, name, k+1, agent, k+1, name, name)
	}
	b.WriteString(`  - phase: 2
    actions:
      - run: "cat one.txt two.txt three.txt > all.txt"
`)
	return b.String()
}

// TestLanesSurviveSIGKILL SIGKILLs runs of a phase of three lanes at seeded
// random moments — a lane mid-session, right after a lane's commit (before
// its pending write), during the review — then resumes (or runs again)
// until each completes. Every run must end with the branch of an
// uninterrupted run, file for file and commit for commit; a lane whose
// work was committed before a kill never runs a session again (only
// unfinished lanes do); and no agent process outlives the run. 20 kills,
// in place and in the run's own work tree. GAFFER_KILL_SEED picks another
// seed.
func TestLanesSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	seed := killSeed(t, 20260131)
	const dates = "GAFFER_REPRODUCIBLE_DATES=1"
	const runID = "r-20260101-lanes1"
	type setup struct{ dir, plan, script, marker string }
	newSetup := func(t *testing.T) setup {
		base := t.TempDir()
		dir := filepath.Join(base, "repo")
		if _, err := workspace.Init(dir, "main"); err != nil {
			t.Fatal(err)
		}
		// The same start commit every time: the runs' commits name it.
		start := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start")
		start.Dir = dir
		start.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := start.CombinedOutput(); err != nil {
			t.Fatalf("start commit: %v\n%s", err, out)
		}
		marker := filepath.Join(base, "agent-"+strconv.FormatUint(rand.Uint64(), 36)+".sh")
		// The agent leaves a process of its own in the background (its
		// command line names the script), as agents do: it must end
		// with the session, or with the next gaffer after a kill.
		if err := os.WriteFile(marker, []byte("#!/bin/sh\nif [ \"$1\" = bg ]; then sleep 30; exit; fi\n\"$0\" bg &\nsleep 0.2\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		s := setup{dir: dir, plan: filepath.Join(base, "plan.md"), script: filepath.Join(base, "script.yaml"), marker: marker}
		writeTestFile(t, s.plan, laneKillPlan)
		writeTestFile(t, s.script, laneKillScript(marker))
		return s
	}
	runArgs := func(m runMode, s setup) []string {
		return m.args("--repo", s.dir, "run", "--plan", s.plan, "--script", s.script, "--run-id", runID, "--auto-approve")
	}
	// The uninterrupted run: its branch is what every killed run must end with.
	ref := newSetup(t)
	if out, code := startProc(t, bin, runArgs(runModes[0], ref), dates).wait(); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, out)
	}
	if pids := processesNaming(t, ref.marker); len(pids) > 0 {
		t.Fatalf("the reference run's agent processes %v outlived it", pids)
	}
	wantTree := gitOut(t, ref.dir, "rev-parse", "HEAD^{tree}")
	wantLog := gitOut(t, ref.dir, "log", "--format=%s%n%b")
	if gitOut(t, ref.dir, "show", "HEAD~1:all.txt") != "one\ntwo\nthree" {
		t.Fatalf("the reference run's all.txt:\n%s", gitOut(t, ref.dir, "show", "HEAD~1:all.txt"))
	}

	rng := rand.New(rand.NewPCG(seed, 31))
	kills := 0
	for mi, m := range runModes {
		t.Run(m.name, func(t *testing.T) {
			for scenario := 0; kills < 10*(mi+1); scenario++ {
				s := newSetup(t)
				args := runArgs(m, s)
				var events []string // the lanes' starts, and what was committed at each kill
				for round := 0; ; round++ {
					if round > 30 {
						t.Fatalf("scenario %d: no progress after %d rounds", scenario, round)
					}
					mode, delay, env := "none", time.Duration(0), ""
					if kills < 10*(mi+1) {
						switch rng.IntN(4) {
						case 0:
							mode, env = "after-commit", "GAFFER_TEST_PAUSE_AFTER_COMMIT=10s"
						case 1:
							mode, env = "review", "GAFFER_TEST_PAUSE_SESSION=reviewer/1/1"
						default:
							mode, delay = "random", time.Duration(100+rng.IntN(2000))*time.Millisecond
						}
					}
					p := startProc(t, bin, args, dates, env)
					killed := false
					if mode == "review" {
						if p.waitLine("gaffer-test: session reviewer/1/1") {
							killed = p.killAt("random", 0)
						}
					} else {
						killed = p.killAt(mode, delay)
					}
					out, code := p.wait()
					events = append(events, laneStarts.FindAllString(out, -1)...)
					if killed {
						kills++
						t.Logf("kill %2d: scenario %d round %d: gaffer %s killed (%s %v)", kills, scenario, round, args[2], mode, delay)
						events = append(events, committedLanes(t, s.dir, runID)...)
					} else if code != 0 {
						t.Fatalf("scenario %d: gaffer %s: exit %d\n%s", scenario, strings.Join(args[2:], " "), code, out)
					}
					switch st := procStatus(t, bin, s.dir); st {
					case "completed":
					case "running":
						args = []string{"--repo", s.dir, "resume"}
						continue
					case "":
						args = runArgs(m, s)
						continue
					default:
						t.Fatalf("scenario %d: status %q after round %d\n%s", scenario, st, round, out)
					}
					break
				}
				rev := m.rev(runID)
				if got := gitOut(t, s.dir, "rev-parse", rev+"^{tree}"); got != wantTree {
					t.Fatalf("scenario %d: tree %s, want %s\n%s", scenario, got, wantTree, gitOut(t, s.dir, "log", "--stat", rev))
				}
				if got := gitOut(t, s.dir, "log", "--format=%s%n%b", rev); got != wantLog {
					t.Fatalf("scenario %d: commits\n%s\nwant\n%s", scenario, got, wantLog)
				}
				checkNoPhaseTwice(t, s.dir, rev)
				checkOnlyUnfinishedLanesRanAgain(t, events)
				if pids := processesNaming(t, s.marker); len(pids) > 0 {
					t.Fatalf("scenario %d: agent processes %v outlived the run", scenario, pids)
				}
				if refs := gitOut(t, s.dir, "for-each-ref", workspace.LaneRefPrefix); refs != "" {
					t.Fatalf("scenario %d: lane refs left: %s", scenario, refs)
				}
				m.workTreeGone(t, s.dir, runID)
			}
		})
	}
}

// laneStarts finds the lanes' starts in gaffer's output.
var laneStarts = regexp.MustCompile(`start-lane-[0-9]`)

// committedLanes lists, as "committed-lane-K", the lanes whose work was
// committed (their ref set) when the run was killed: such a lane must not
// start a session again (see checkOnlyUnfinishedLanesRanAgain).
func committedLanes(t *testing.T, dir, runID string) []string {
	t.Helper()
	refs := gitOut(t, dir, "for-each-ref", "--format=%(refname)", workspace.LaneRefPrefix+runID+"/p1/")
	var out []string
	for _, r := range strings.Fields(refs) {
		out = append(out, "committed-lane-"+r[strings.LastIndex(r, "/")+1:])
	}
	return out
}

// checkOnlyUnfinishedLanesRanAgain reads the events of a run's processes,
// in order: a lane whose work was committed at a kill never starts again
// after it, and every lane started at least once.
func checkOnlyUnfinishedLanesRanAgain(t *testing.T, events []string) {
	t.Helper()
	committed := map[string]bool{}
	starts := map[string]int{}
	for _, e := range events {
		k := e[len(e)-1:]
		if strings.HasPrefix(e, "committed-") {
			committed[k] = true
			continue
		}
		if committed[k] {
			t.Fatalf("lane %s started again after its work was committed: %v", k, events)
		}
		starts[k]++
	}
	for _, k := range []string{"1", "2", "3"} {
		if starts[k] == 0 {
			t.Fatalf("lane %s never started: %v", k, events)
		}
	}
}

// processesNaming lists the live processes whose command line holds s
// (Linux /proc); none elsewhere.
func processesNaming(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	// A process of a killed gaffer's agent group dies at the next
	// gaffer's start (or with its leader): give stragglers a moment.
	for range 50 {
		pids = pids[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), s) && !zombie(pid) {
				pids = append(pids, pid)
			}
		}
		if len(pids) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return pids
}

var stateField = regexp.MustCompile(`\) (\S) `)

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	m := stateField.FindSubmatch(b)
	return m != nil && string(m[1]) == "Z"
}
