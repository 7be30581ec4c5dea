package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/runview"
)

// TestKillAndResume runs the demo's workflow as real processes and
// SIGKILLs them at seeded random moments — during agent work, right after
// a commit (before its checkpoint), while an approval is being processed —
// then resumes (or approves) until the run completes. Every run must end
// with the same tree and the same commits as an uninterrupted run, with no
// phase committed twice. It does so for runs in place and for runs in
// their own work trees (whose branch must match, with the user's dirty
// checkout never touched). GAFFER_KILL_SEED picks another seed.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kill test: builds the binary and runs real processes")
	}
	seed := killSeed(t, 20260101)
	// Summaries and execution-state.json name commits: the same tree needs
	// the same commit dates.
	const dates = "GAFFER_REPRODUCIBLE_DATES=1"

	bin := gafferBinary(t)
	const runID = "r-20260101-kill00"
	goal := profile.PlanTitle(demo.Plan, "plan.md")

	// The uninterrupted run.
	ref, _, script := demoRepo(t)
	runArgs := func(m runMode, dir, script string, auto bool) []string {
		a := m.args("--repo", dir, "run", "--goal", goal, "--script", script, "--run-id", runID, "--pace", "15ms")
		if auto {
			a = append(a, "--auto-approve")
		}
		return a
	}
	if out, code := startProc(t, bin, runArgs(runModes[0], ref, script, true), dates).wait(); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, out)
	}
	wantTree := gitOut(t, ref, "rev-parse", "HEAD^{tree}")
	wantLog := gitOut(t, ref, "log", "--format=%s")

	for _, m := range runModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 0))
			const totalKills = 20
			kills := 0
			for scenario := 0; kills < totalKills; scenario++ {
				dir, _, script := demoRepo(t)
				if !m.inPlace {
					dirtyCheckout(t, dir)
				}
				untouched := m.untouched(t, dir)
				auto := scenario%2 == 0
				args := runArgs(m, dir, script, auto)
				for round := 0; ; round++ {
					if round > 40 {
						t.Fatalf("scenario %d: no progress after %d rounds", scenario, round)
					}
					mode, delay := "none", time.Duration(0)
					if kills < totalKills {
						mode = []string{"random", "random", "after-commit"}[rng.IntN(3)]
						delay = time.Duration(50+rng.IntN(1500)) * time.Millisecond
					}
					env := ""
					if mode == "after-commit" {
						env = "GAFFER_TEST_PAUSE_AFTER_COMMIT=10s"
					}
					p := startProc(t, bin, args, dates, env)
					killed := p.killAt(mode, delay)
					out, code := p.wait()
					if killed {
						kills++
						when := "at its first commit, before the checkpoint"
						if mode == "random" {
							when = "after " + delay.String()
						}
						t.Logf("kill %2d: scenario %d (auto-approve %v) round %d: gaffer %s killed %s", kills, scenario, auto, round, args[2], when)
					} else if code != 0 && code != ExitAwaitingApproval {
						t.Fatalf("scenario %d: gaffer %s: exit %d\n%s", scenario, strings.Join(args[2:], " "), code, out)
					}
					untouched(fmt.Sprintf("scenario %d round %d", scenario, round))
					st := procStatus(t, bin, dir)
					switch st {
					case "completed":
					case "awaiting_approval":
						args = []string{"--repo", dir, "approve"}
						continue
					case "running":
						args = []string{"--repo", dir, "resume"}
						continue
					case "":
						// Killed before the run's first checkpoint (or before its store
						// existed): nothing to resume, so the user starts it again.
						args = runArgs(m, dir, script, auto)
						continue
					default:
						t.Fatalf("scenario %d: status %q after round %d\n%s", scenario, st, round, out)
					}
					break
				}
				rev := m.rev(runID)
				if got := gitOut(t, dir, "rev-parse", rev+"^{tree}"); got != wantTree {
					t.Fatalf("scenario %d: tree %s, want %s\n%s", scenario, got, wantTree, gitOut(t, dir, "log", "--stat", rev))
				}
				if got := gitOut(t, dir, "log", "--format=%s", rev); got != wantLog {
					t.Fatalf("scenario %d: commits\n%s\nwant\n%s", scenario, got, wantLog)
				}
				checkNoPhaseTwice(t, dir, rev)
				if m.inPlace {
					if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
						t.Fatalf("scenario %d: tree not clean:\n%s", scenario, got)
					}
				}
				m.workTreeGone(t, dir, runID)
			}
		})
	}
}

// checkNoPhaseTwice fails when rev's reflog (HEAD's, or a run's branch's)
// holds two different commits for one phase: a phase committed, lost and
// committed again.
func checkNoPhaseTwice(t *testing.T, dir, rev string) {
	t.Helper()
	seen := map[string]string{}
	for _, l := range strings.Split(gitOut(t, dir, "log", "-g", "--format=%H %s", rev), "\n") {
		h, subj, _ := strings.Cut(l, " ")
		if !strings.HasPrefix(subj, "phase ") {
			continue
		}
		if prev, ok := seen[subj]; ok && prev != h {
			t.Fatalf("%q committed twice: %s and %s", subj, prev, h)
		}
		seen[subj] = h
	}
	if len(seen) == 0 {
		t.Fatalf("no phase's commit in the reflog of %s", rev)
	}
}

type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    syncBuffer
	commit chan struct{}
	done   chan struct{}
}

// startProc starts the gaffer binary with args (and the NAME=VALUE
// entries of env, but empty ones, in its environment).
func startProc(t *testing.T, bin string, args []string, env ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: exec.Command(bin, args...), commit: make(chan struct{}, 1), done: make(chan struct{})}
	p.cmd.Env = os.Environ()
	for _, kv := range env {
		if kv != "" {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	r, w := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A test that fails before it ends the process must not leave it running.
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
		}
	})
	go func() {
		scanLines(r, &p.out, func(line string) {
			if strings.HasPrefix(line, "gaffer-test: committed") {
				select {
				case p.commit <- struct{}{}:
				default:
				}
			}
		})
		close(p.done)
	}()
	go func() { _ = p.cmd.Wait(); w.Close() }()
	return p
}

// killAt SIGKILLs the process after delay ("random") or at its first
// commit ("after-commit"), unless it exits first; it reports whether it
// killed it.
func (p *proc) killAt(mode string, delay time.Duration) bool {
	var at <-chan time.Time
	var commit <-chan struct{}
	switch mode {
	case "random":
		at = time.After(delay)
	case "after-commit":
		commit = p.commit
	default:
		return false
	}
	select {
	case <-p.done:
		return false
	case <-at:
	case <-commit:
	}
	return p.cmd.Process.Signal(syscall.SIGKILL) == nil && !exited(p)
}

func exited(p *proc) bool {
	select {
	case <-p.done:
		return p.cmd.ProcessState != nil && p.cmd.ProcessState.Exited()
	case <-time.After(5 * time.Second):
		p.t.Fatal("process did not die")
	}
	return false
}

func (p *proc) wait() (string, int) {
	<-p.done
	for p.cmd.ProcessState == nil {
		time.Sleep(time.Millisecond)
	}
	return p.output(), p.cmd.ProcessState.ExitCode()
}

func procStatus(t *testing.T, bin, dir string) string {
	t.Helper()
	out, err := exec.Command(bin, "--repo", dir, "status", "--json").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == ExitPrecondition && strings.Contains(string(ee.Stderr), "no runs in this repository") {
		return "" // killed before the store or the run's first checkpoint existed
	}
	if errors.As(err, &ee) {
		t.Fatalf("status: %v\n%s%s", err, out, ee.Stderr)
	}
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var v runview.Run
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return v.Status
}
