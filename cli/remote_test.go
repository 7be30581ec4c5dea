package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/nodes"
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
	bin := gafferBinary(t)
	url := pgtest.URL(t)
	demoDir, _, script := demoRepo(t)
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	gitOut(t, root, "clone", "--quiet", "--bare", demoDir, remote)
	ca, cb := filepath.Join(root, "a"), filepath.Join(root, "b")
	gitOut(t, root, "clone", "--quiet", remote, ca)
	gitOut(t, root, "clone", "--quiet", remote, cb)
	goal := planTitle(demo.Plan, "plan.md")
	t.Setenv("GAFFER_STORE", url)
	t.Setenv("GAFFER_IN_PLACE", "false") // each run in its own clone
	t.Setenv("GAFFER_TEST_PAUSE_AFTER_COMMIT", "60s")
	a := startServe(t, bin, ca, "--host-id", "a", "--queue-lease", "2s", "--remote", remote)
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
	os.Setenv("GAFFER_TEST_PAUSE_AFTER_COMMIT", "") // b does not pause
	b := startServe(t, bin, cb, "--host-id", "b", "--queue-lease", "2s", "--remote", remote)
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
