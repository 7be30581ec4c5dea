package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/profile"
)

// TestServeTwoHostsRemote runs two `gaffer serve` processes with
// different host ids on one database, each in its own clone of a bare
// repository that is their shared remote (--remote). Serve a is
// SIGKILLed after its first phase's commit, before the push and the
// checkpoint; serve b takes the run over from the remote and finishes it.
// The remote's branch holds one commit per phase (no duplicate, no gap)
// and the run's record, each with the lease token it was pushed under,
// and `go test ./...` passes in a fresh clone of it.
func TestServeTwoHostsRemote(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	bin = binWithEnv(t, bin, "GAFFER_STORE="+pgtest.URL(t), "GAFFER_IN_PLACE=false") // each run in its own clone
	demoDir, _, script := demoRepo(t)
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	gitOut(t, root, "clone", "--quiet", "--bare", demoDir, remote)
	ca, cb := filepath.Join(root, "a"), filepath.Join(root, "b")
	gitOut(t, root, "clone", "--quiet", remote, ca)
	gitOut(t, root, "clone", "--quiet", remote, cb)
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	a := startServeEnv(t, bin, ca, []string{"GAFFER_TEST_PAUSE_AFTER_COMMIT=60s"}, "--host-id", "a", "--queue-lease", "2s", "--remote", remote)
	out, code := gafferCmd(t, bin, "--repo", ca, "submit", "--goal", goal, "--script", script, "--run-id", "r-1", "--auto-approve")
	if code != 0 || !strings.Contains(out, "r-1 queued") {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(a.output(), "gaffer-test: committed") {
		if time.Now().After(deadline) {
			t.Fatalf("serve a made no commit:\n%s", a.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b := startServe(t, bin, cb, "--host-id", "b", "--queue-lease", "2s", "--remote", remote) // b does not pause
	a.stop(syscall.SIGKILL)

	v := waitStatus(t, bin, cb, "r-1", "completed", b)
	if len(v.Phases) < 2 {
		t.Fatalf("r-1: %d phases, want a plan of several: %+v", len(v.Phases), v)
	}
	// The remote's branch: the base, then phases 1..N, then the record.
	log := gitOut(t, remote, "log", "--reverse", "--format=%(trailers:key="+nodes.TrailerPhase+",valueonly,separator=)|%(trailers:key="+nodes.TrailerRecord+
		",valueonly,separator=)|%(trailers:key="+nodes.TrailerLease+",valueonly,separator=)", "main..gaffer/r-1")
	lines := strings.Split(log, "\n")
	if len(lines) != len(v.Phases)+1 {
		t.Fatalf("the remote's branch has %d commits, want %d phases and the record:\n%s", len(lines), len(v.Phases), log)
	}
	for i, l := range lines {
		f := strings.Split(l, "|")
		if len(f) != 3 || f[2] == "" || f[2] == "0" {
			t.Errorf("commit %d of the branch has no lease token: %q", i+1, l)
			continue
		}
		if i < len(v.Phases) && f[0] != strconv.Itoa(i+1) {
			t.Errorf("commit %d of the branch is phase %q, want %d:\n%s", i+1, f[0], i+1, log)
		}
		if i == len(v.Phases) && f[1] != "final" {
			t.Errorf("the branch's last commit is not the run's record: %q", l)
		}
	}
	if !strings.Contains(b.output(), `"recovered":true`) {
		t.Errorf("serve b did not take r-1 over (recovered):\n%s", b.output())
	}
	if !strings.Contains(b.output(), "the phase in progress starts again") {
		t.Errorf("serve b did not redo the phase whose work was in a's clone:\n%s", b.output())
	}
	// The run's work is on the remote: a fresh clone of its branch builds
	// and passes its tests.
	fresh := filepath.Join(root, "fresh")
	gitOut(t, root, "clone", "--quiet", "--branch", "gaffer/r-1", remote, fresh)
	test := exec.Command("go", "test", "./...")
	test.Dir = fresh
	test.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := test.CombinedOutput(); err != nil {
		t.Fatalf("go test in a fresh clone of the branch: %v\n%s", err, out)
	}
	if code := b.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve b exit %d after SIGTERM\n%s", code, b.output())
	}
}

// twoHosts is the setup of a two-host case: a bare remote made from the
// demo repository and a clone of it per host, one database. bin runs
// gaffer with the database as its store (binWithEnv).
type twoHosts struct {
	bin, remote, root, ca, cb, goal, script string
}

func newTwoHosts(t *testing.T, bin string) *twoHosts {
	t.Helper()
	demoDir, _, script := demoRepo(t)
	bin = binWithEnv(t, bin, "GAFFER_STORE="+pgtest.URL(t), "GAFFER_IN_PLACE=false", "GAFFER_REPRODUCIBLE_DATES=1")
	h := &twoHosts{bin: bin, root: t.TempDir(), goal: profile.PlanTitle(demo.Plan, "plan.md"), script: script}
	h.remote = filepath.Join(h.root, "remote.git")
	gitOut(t, h.root, "clone", "--quiet", "--bare", demoDir, h.remote)
	h.ca, h.cb = filepath.Join(h.root, "a"), filepath.Join(h.root, "b")
	gitOut(t, h.root, "clone", "--quiet", h.remote, h.ca)
	gitOut(t, h.root, "clone", "--quiet", h.remote, h.cb)
	return h
}

// serve starts the serve of host id in dir, with env (NAME=VALUE entries)
// in its environment.
func (h *twoHosts) serve(t *testing.T, dir, id string, env ...string) *server {
	t.Helper()
	return startServeEnv(t, h.bin, dir, env, "--host-id", id, "--queue-lease", "2s", "--remote", h.remote)
}

func (h *twoHosts) submit(t *testing.T) {
	t.Helper()
	out, code := gafferCmd(t, h.bin, "--repo", h.ca, "submit", "--goal", h.goal, "--script", h.script, "--run-id", "r-1", "--auto-approve")
	if code != 0 || !strings.Contains(out, "r-1 queued") {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
}

// waitLine waits until s's output holds line n times.
func waitLine(t *testing.T, s *server, line string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a hang's guard: a loaded machine runs the demo slowly
	for strings.Count(s.output(), line) < n {
		if time.Now().After(deadline) {
			t.Fatalf("serve's output has %q fewer than %d times:\n%s", line, n, s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// branchTrees is each commit of the remote's branch gaffer/r-1 after
// main: its files and their contents, with commit hashes (which hold
// the lease tokens and so differ between runs) made equal.
func branchTrees(t *testing.T, remote string) []map[string]string {
	t.Helper()
	hex := regexp.MustCompile(`\b[0-9a-f]{40}\b|\b[0-9a-f]{10}\b`)
	var trees []map[string]string
	for _, c := range strings.Fields(gitOut(t, remote, "rev-list", "--reverse", "main..gaffer/r-1")) {
		files := map[string]string{}
		for _, p := range strings.Split(gitOut(t, remote, "ls-tree", "-r", "--name-only", c), "\n") {
			files[p] = hex.ReplaceAllString(gitOut(t, remote, "show", c+":"+p), "H")
		}
		trees = append(trees, files)
	}
	return trees
}

// TestServeTwoHostsTakeovers kills serve a at the points a takeover must
// handle and checks what serve b makes of the remote's branch:
//   - summary: a dies after phase 2's commit, before its push; b redoes
//     phase 2, and the branch holds the same files, commit by commit, as
//     a run on one host (phase 1's summary.md, written by a and never
//     committed there, is in phase 2's commit).
//   - adopt: a dies after phase 1's push, before its checkpoint; b adopts
//     the pushed commit: one commit for the phase, its agent not run again.
//   - foreign: a dies after phase 1's commit; a person pushes a commit to
//     the run's branch; b stops the run with one line naming the tip and
//     the fix, and the branch stays at that commit.
func TestServeTwoHostsTakeovers(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	t.Run("summary", func(t *testing.T) {
		t.Parallel()
		ref := newTwoHosts(t, bin)
		s := ref.serve(t, ref.ca, "a")
		ref.submit(t)
		waitStatus(t, ref.bin, ref.ca, "r-1", "completed", s)
		s.stop(syscall.SIGTERM)
		want := branchTrees(t, ref.remote)

		h := newTwoHosts(t, bin)
		a := h.serve(t, h.ca, "a", "GAFFER_TEST_PAUSE_AFTER_COMMIT=3s") // every commit pauses: a dies in phase 2's pause
		h.submit(t)
		waitLine(t, a, "gaffer-test: committed", 2)
		b := h.serve(t, h.cb, "b")
		a.stop(syscall.SIGKILL)
		waitStatus(t, h.bin, h.cb, "r-1", "completed", b)
		b.stop(syscall.SIGTERM)
		got := branchTrees(t, h.remote)
		if len(got) != len(want) {
			t.Fatalf("the branch has %d commits after the takeover, %d on one host", len(got), len(want))
		}
		for i := range want {
			for p, w := range want[i] {
				if g, ok := got[i][p]; !ok {
					t.Errorf("commit %d of the branch has no %s after the takeover", i+1, p)
				} else if g != w {
					t.Errorf("commit %d: %s differs after the takeover:\n%s\nwant:\n%s", i+1, p, g, w)
				}
			}
			for p := range got[i] {
				if _, ok := want[i][p]; !ok {
					t.Errorf("commit %d has %s after the takeover only", i+1, p)
				}
			}
		}
	})
	t.Run("adopt", func(t *testing.T) {
		t.Parallel()
		h := newTwoHosts(t, bin)
		a := h.serve(t, h.ca, "a", "GAFFER_TEST_PAUSE_AFTER_PUSH=60s")
		h.submit(t)
		waitLine(t, a, "gaffer-test: pushed", 1)
		b := h.serve(t, h.cb, "b")
		a.stop(syscall.SIGKILL)
		v := waitStatus(t, h.bin, h.cb, "r-1", "completed", b)
		b.stop(syscall.SIGTERM)
		phases := gitOut(t, h.remote, "log", "--format=%(trailers:key="+nodes.TrailerPhase+",valueonly,separator=)", "main..gaffer/r-1")
		if n := strings.Count(phases, "1"); n != 1 || len(strings.Fields(phases)) != len(v.Phases) {
			t.Errorf("the branch's phases after adopting phase 1 (newest first): %q, want one commit per phase", phases)
		}
		if strings.Contains(b.output(), "the phase in progress starts again") {
			t.Errorf("serve b redid phase 1 instead of adopting its pushed commit:\n%s", b.output())
		}
		if out := b.output(); strings.Contains(out, " developer p1 ") || strings.Contains(out, " reviewer p1 ") {
			t.Errorf("serve b ran phase 1's sessions again instead of adopting its pushed commit:\n%s", out)
		}
	})
	t.Run("foreign", func(t *testing.T) {
		t.Parallel()
		h := newTwoHosts(t, bin)
		a := h.serve(t, h.ca, "a", "GAFFER_TEST_PAUSE_AFTER_COMMIT=60s")
		h.submit(t)
		waitLine(t, a, "gaffer-test: committed", 1)
		a.stop(syscall.SIGKILL)
		p := filepath.Join(h.root, "person")
		gitOut(t, h.root, "clone", "--quiet", "--branch", "gaffer/r-1", h.remote, p)
		gitOut(t, p, "-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "--quiet", "--allow-empty", "-m", "a person's commit")
		gitOut(t, p, "push", "--quiet", "origin", "gaffer/r-1")
		tip := gitOut(t, p, "rev-parse", "HEAD")
		b := h.serve(t, h.cb, "b")
		waitLine(t, b, `"msg":"run failed"`, 1)
		v, _ := statusOf(t, h.bin, h.cb, "r-1")
		if v.Status != "running" || !v.Stopped {
			t.Errorf("r-1 is %s (stopped %v), want running and stopped", v.Status, v.Stopped)
		}
		for _, l := range strings.Split(b.output(), "\n") {
			if strings.Contains(l, `"msg":"run failed"`) && (!strings.Contains(l, tip[:10]) || !strings.Contains(l, "--force-with-lease")) {
				t.Errorf("serve b's stop does not name the tip %s and the fix: %s", tip[:10], l)
			}
		}
		if got := gitOut(t, h.remote, "rev-parse", "gaffer/r-1"); got != tip {
			t.Errorf("the branch moved from the person's commit %s to %s", tip, got)
		}
		b.stop(syscall.SIGTERM)
	})
}
