package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeRemoteFork forks, from host b's checkout, a run serve a
// finished on the shared remote (the command goes through the database:
// no serve answers on b's socket), and resumes the fork: its branch
// gaffer/<fork> is pushed to the remote at the commit the checkpoint
// stood on, any serve may take it, and it finishes there with its own
// commits.
func TestServeRemoteFork(t *testing.T) {
	t.Parallel()
	h := newTwoHosts(t, gafferBinary(t))
	bin := h.bin
	a := h.serve(t, h.ca, "a")
	h.submit(t)
	waitStatus(t, bin, h.ca, "r-1", "completed", a)
	seq := forkSeq(t, bin, h.cb, "r-1", 3) // before phase 2's second review
	from := strconv.FormatUint(seq, 10)
	// Without the remote, the fork cannot be made: one line says why.
	out, code := gafferCmd(t, bin, "--repo", h.cb, "fork", "r-1", "--from", from)
	if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "pass --remote URL") {
		t.Fatalf("fork without --remote: exit %d, want %d and one line naming --remote:\n%s", code, ExitPrecondition, out)
	}
	out, code = gafferCmd(t, bin, "--repo", h.cb, "fork", "r-1", "--from", from, "--remote", h.remote)
	if code != 0 {
		t.Fatalf("fork: exit %d\n%s\nserve a:\n%s", code, out, a.output())
	}
	m := regexp.MustCompile(`as (r-\d{8}-[0-9a-f]{6}), on branch (\S+) at ([0-9a-f]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("fork's output names no run, branch and base:\n%s", out)
	}
	fork, branch, base := m[1], m[2], m[3]
	// On the remote: the base, then the fork's commit of its execution
	// directory (the parent's plan and summaries).
	if got := gitOut(t, h.remote, "rev-parse", branch+"~1"); !strings.HasPrefix(got, base) {
		t.Fatalf("the remote's %s~1 is %s, want the fork's base %s", branch, got, base)
	}
	if files := gitOut(t, h.remote, "show", "--name-only", "--format=%(trailers:key=Gaffer-Run,valueonly)", branch); !strings.HasPrefix(files, fork) ||
		!strings.Contains(files, "plan.md") {
		t.Fatalf("the fork's first commit is not its own or lacks the plan:\n%s", files)
	}
	if _, err := os.Stat(filepath.Join(h.cb, ".git", "gaffer.worktrees", fork)); !os.IsNotExist(err) {
		t.Errorf("the fork's clone stays on the host that forked it: %v", err)
	}
	b := h.serve(t, h.cb, "b")
	a.stop(syscall.SIGTERM)
	out, code = gafferCmd(t, bin, "--repo", h.cb, "resume", fork)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	v := waitStatus(t, bin, h.cb, fork, "completed", b)
	b.stop(syscall.SIGTERM)
	log := gitOut(t, h.remote, "log", "--format=%H %(trailers:key=Gaffer-Run,valueonly,separator=)", base+".."+branch)
	t.Logf("fork's branch after its base:\n%s", log)
	for _, l := range strings.Split(log, "\n") {
		if !strings.HasSuffix(l, " "+fork) {
			t.Errorf("the fork's branch holds a commit not its own: %s", l)
		}
	}
	if len(v.Phases) == 0 {
		t.Errorf("fork: no phases")
	}
}

// TestServeRemoteInPlace submits a run --in-place to a serve that
// pushes to a shared remote: it is refused, before its first checkpoint,
// with one line naming the cause and the fix, and nothing is committed
// in the serve's checkout (the run would have worked on its main branch,
// pushing nothing, for no other host to take over).
func TestServeRemoteInPlace(t *testing.T) {
	t.Parallel()
	h := newTwoHosts(t, gafferBinary(t))
	bin := h.bin
	a := h.serve(t, h.ca, "a")
	head := gitOut(t, h.ca, "rev-parse", "HEAD")
	out, code := gafferCmd(t, bin, "--repo", h.ca, "submit", "--goal", h.goal, "--script", h.script, "--run-id", "r-1", "--auto-approve", "--in-place")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	want := "gaffer: run r-1 failed before its first checkpoint: --in-place works in one host's checkout, and these serves push each run's branch to the shared remote " +
		h.remote + " instead: leave --in-place out; submit it again once that is fixed\n"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, code = gafferCmd(t, bin, "--repo", h.ca, "status", "r-1")
		if out == want && code == ExitPrecondition {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status: exit %d\n%s\nwant exit %d\n%s\nserve:\n%s", code, out, ExitPrecondition, want, a.output())
		}
	}
	if got := gitOut(t, h.ca, "rev-parse", "HEAD"); got != head {
		t.Errorf("the serve's checkout moved from %s to %s", head, got)
	}
	a.stop(syscall.SIGTERM)
}
