package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/serve"
)

// TestServeManyRunsOfOneRepositoryUnderKillsAndClients submits 16 runs of
// one repository at once to a `gaffer serve --workers 8` (GAFFER_SOAK=1:
// 64 runs, then again with --workers 64) with the user's checkout dirty,
// SIGKILLs serve 3 times at seeded random moments (GAFFER_KILL_SEED), and
// has clients hammer status, list and approve on its socket while the runs
// go on. Every run completes with the commits of the same run alone in a
// clean checkout; the checkout, the work trees, the journal, serve's file
// descriptors and the agents' processes are as they were.
func TestServeManyRunsOfOneRepositoryUnderKillsAndClients(t *testing.T) {
	// Not parallel: its 16 runs and 16 clients take both cores, and the
	// tests beside it missed their moments.
	bin := gafferBinary(t)
	n, workers := 16, []int{8}
	if os.Getenv("GAFFER_SOAK") != "" {
		n, workers = 64, []int{8, 64}
	}
	seed := killSeed(t, 20260126)
	env := []string{"GAFFER_REPRODUCIBLE_DATES=1"}
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("r-20260101-sf%04d", i)
	}
	want := referenceTrees(t, bin, goal, ids, env)
	for _, w := range workers {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			soak(t, bin, goal, ids, want, w, env, rand.New(rand.NewPCG(seed, uint64(w))))
		})
	}
}

// referenceTrees runs each id alone, in place, in a clean demo checkout
// (4 at once), with env in its environment, and returns its commits'
// subjects and trees.
func referenceTrees(t *testing.T, bin, goal string, ids, env []string) map[string]string {
	want := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, id := range ids {
		ref, _, script := demoRepo(t)
		base := gitOut(t, ref, "rev-parse", "HEAD")
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := startProc(t, bin, []string{"--repo", ref, "run", "--goal", goal, "--script", script, "--run-id", id, "--auto-approve", "--in-place"}, env...)
			if out, code := p.wait(); code != 0 {
				t.Errorf("reference run %s: exit %d\n%s", id, code, out)
				return
			}
			trees := phaseTrees(t, ref, base, "HEAD")
			mu.Lock()
			want[id] = trees
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return want
}

// soak runs ids in serve with env and GAFFER_IN_PLACE=false in the
// environment of every gaffer process.
func soak(t *testing.T, bin, goal string, ids []string, want map[string]string, workers int, env []string, rng *rand.Rand) {
	env = append(slices.Clip(env), "GAFFER_IN_PLACE=false")
	dir, _, script := demoRepo(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	dirtyCheckout(t, dir)
	before := checkoutPrint(t, dir)
	store := filepath.Join(dir, ".git", "gaffer")
	trees := host.WorkTreesDir(store)
	args := []string{"--workers", strconv.Itoa(workers)}
	s := startServeEnv(t, bin, dir, env, args...)
	restFDs := countFDs(t, s.cmd.Process.Pid)
	restOther := otherFDs(s.cmd.Process.Pid, store)

	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := envCommand(context.Background(), env, bin, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", id, "--auto-approve").CombinedOutput()
			if err != nil {
				t.Errorf("submit %s: %v\n%s", id, err, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var logs strings.Builder
	for k := 1; k <= 3; k++ {
		delay := time.Duration(300+rng.IntN(3000)) * time.Millisecond
		time.Sleep(delay)
		_ = s.cmd.Process.Kill()
		<-s.done
		logs.WriteString(s.output())
		// The agents die with serve: their process groups get SIGKILL.
		if left := procsUnder(trees, 5*time.Second); len(left) > 0 {
			t.Errorf("kill %d: processes left in the work trees after serve died:\n%s", k, strings.Join(left, "\n"))
		}
		if after := checkoutPrint(t, dir); after != before {
			t.Fatalf("kill %d: the user's checkout changed:\nbefore\n%s\nafter\n%s", k, before, after)
		}
		s = startServeEnv(t, bin, dir, env, args...)
		t.Logf("kill %d after %s", k, delay)
	}

	// Clients hammer the socket until every run has completed.
	done := make(chan struct{})
	var calls, refused int
	var cmu sync.Mutex
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 1))
			for {
				select {
				case <-done:
					return
				default:
				}
				id := ids[r.IntN(len(ids))]
				cmd := [][]string{{"status", id}, {"list"}, {"approve", id}}[r.IntN(3)]
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				out, err := envCommand(ctx, env, bin, append([]string{"--repo", dir}, cmd...)...).CombinedOutput()
				timedOut := ctx.Err() != nil
				cancel()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Errorf("%v: %v", cmd, err)
				}
				cmu.Lock()
				calls++
				cmu.Unlock()
				switch {
				case timedOut:
					t.Errorf("%v: no answer in 60s (deadlock?)\n%s", cmd, out)
				case code == 0:
				case cmd[0] == "approve" && code == ExitPrecondition && strings.Contains(string(out), "is not waiting for approval"):
					cmu.Lock()
					refused++
					cmu.Unlock()
				default:
					t.Errorf("%v: exit %d\n%s", cmd, code, out)
				}
			}
		}()
	}
	peakFDs := 0
	deadline := time.Now().Add(time.Duration(len(ids)) * 30 * time.Second) // a hang's guard, beside the parallel tests
	for !allCompleted(t, bin, dir, env, len(ids)) {
		peakFDs = max(peakFDs, countFDs(t, s.cmd.Process.Pid))
		if time.Now().After(deadline) {
			close(done)
			wg.Wait()
			t.Fatalf("the runs did not complete\nserve:\n%s", s.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	wall := time.Since(start)
	close(done)
	wg.Wait()
	rss := procStatusField(t, s.cmd.Process.Pid, "VmHWM")
	t.Logf("%d runs, --workers %d: %s (3 kills); clients: %d calls, %d approvals refused; serve's fds: %d at rest, %d at peak; peak RSS of the last serve %s",
		len(ids), workers, wall.Round(time.Millisecond), calls, refused, restFDs, peakFDs, rss)

	for _, id := range ids {
		if got := phaseTrees(t, dir, base, "gaffer/"+id); got != want[id] {
			t.Errorf("branch gaffer/%s:\n%s\nwant (the run alone, in place)\n%s", id, got, want[id])
		}
	}
	if after := checkoutPrint(t, dir); after != before {
		t.Errorf("the user's checkout changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	// No descriptor is left open by the runs and the clients (the
	// store's files are Badger's: they come and go with its tables).
	var fds int
	for range 50 {
		if fds = otherFDs(s.cmd.Process.Pid, store); fds <= restOther {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fds > restOther {
		t.Errorf("serve has %d descriptors open at rest after the runs (besides the store's files), %d before them:\n%s", fds, restOther, lsFDs(s.cmd.Process.Pid))
	}
	if code := s.stop(15); code != 0 {
		t.Errorf("serve exit %d", code)
	}
	logs.WriteString(s.output())
	if strings.Contains(logs.String(), `"msg":"run failed"`) {
		t.Errorf("serve logged a run as failed:\n%s", grepLines(logs.String(), `"msg":"run failed"`))
	}
	if left, _ := os.ReadDir(trees); len(left) != 0 {
		t.Errorf("work trees left after every run ended: %v", left)
	}
	if wt := gitOut(t, dir, "worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("git still lists work trees:\n%s", wt)
	}
	if b, err := os.ReadFile(serve.JournalPath(store)); err != nil || !strings.Contains(string(b), `"active":null,"queued":[]`) {
		t.Errorf("journal at the end: %s, %v", b, err)
	}
	if left := procsUnder(dir, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left in the repository:\n%s", strings.Join(left, "\n"))
	}
}

// allCompleted reports whether `gaffer list` shows n completed runs.
func allCompleted(t *testing.T, bin, dir string, env []string, n int) bool {
	t.Helper()
	out, err := envCommand(context.Background(), env, bin, "--repo", dir, "list", "--json").Output()
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	var runs []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &runs); err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	done := 0
	for _, r := range runs {
		if r.Status == "completed" {
			done++
		}
	}
	return done == n
}

// procsUnder waits up to wait for no process to work under dir (its
// current directory there) and returns the ones that still do.
func procsUnder(dir string, wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	for {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if err != nil || !strings.HasPrefix(cwd, dir) {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			left = append(left, fmt.Sprintf("%d %s (in %s)", pid, strings.ReplaceAll(string(cmdline), "\x00", " "), cwd))
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countFDs(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return len(fds)
}

// otherFDs counts the descriptors of pid that are not files of store.
func otherFDs(pid int, store string) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); !strings.HasPrefix(target, store+"/") {
			n++
		}
	}
	return n
}

func lsFDs(pid int) string {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	var b strings.Builder
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		fmt.Fprintf(&b, "%s -> %s\n", fd.Name(), target)
	}
	return b.String()
}

// procStatusField is a line's value in /proc/PID/status (VmHWM: "90368 kB").
func procStatusField(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
