package cli

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/runview"
)

// Two runs submitted to a serve with two workers work on one repository:
// the pool executes them one after the other, so each run's commits are
// there, in one piece, and the tree is clean.
func TestServeWorkersRunOneRepositoryOneAtATime(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	s := startServe(t, bin, dir, "--workers", "2")
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	runs := []string{"r-20260101-keys1", "r-20260101-keys2"}
	for _, id := range runs {
		out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", id, "--auto-approve", "--in-place")
		if code != 0 || !strings.Contains(out, id+" queued") {
			t.Fatalf("submit %s: exit %d\n%s", id, code, out)
		}
	}
	for _, id := range runs {
		waitTerminal(t, bin, dir, id, s)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d after SIGTERM\n%s", code, s.output())
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean after both runs:\n%s", st)
	}
	// Each run's commits sit on top of base, the first run's all before the
	// second's: no interleaving.
	var order []string
	for _, body := range strings.Split(gitOut(t, dir, "log", "--reverse", "--format=%B%x00", base+"..HEAD"), "\x00") {
		for _, id := range runs {
			if strings.Contains(body, "Gaffer-Run: "+id) {
				order = append(order, id)
			}
		}
	}
	if len(order) == 0 {
		t.Fatalf("no run commits after %s:\n%s", base, gitOut(t, dir, "log", "--format=%h %s"))
	}
	seen := map[string]bool{}
	for i, id := range order {
		if i > 0 && id != order[i-1] && seen[id] {
			t.Fatalf("the runs' commits interleave: %v", order)
		}
		seen[id] = true
	}
	for _, id := range runs {
		if !seen[id] {
			t.Errorf("run %s has no commit; commits by run: %v\n%s", id, order, gitOut(t, dir, "log", "--format=%h %s"))
		}
	}
	// serve's log: each run's job was executing alone.
	inside, executed := "", 0
	for _, line := range strings.Split(s.output(), "\n") {
		var rec struct{ Msg, Run string }
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Run == "" {
			continue
		}
		switch rec.Msg {
		case "run executing":
			if inside != "" {
				t.Fatalf("run %s started while %s was executing\n%s", rec.Run, inside, s.output())
			}
			inside = rec.Run
			executed++
		case "run finished", "run failed", "run waiting for approval":
			inside = ""
		}
	}
	if executed != len(runs) {
		t.Errorf("serve logged %d jobs executing, want %d\n%s", executed, len(runs), s.output())
	}
}

// waitTerminal polls until the run has finished (completed, failed, ...).
func waitTerminal(t *testing.T, bin, dir, runID string, s *server) runview.Run {
	t.Helper()
	for range 1200 {
		v, _ := statusOf(t, bin, dir, runID)
		switch v.Status {
		case "completed":
			return v
		case "failed", "halted", "rejected", "cancelled":
			t.Fatalf("run %s ended %s\nserve:\n%s", runID, v.Status, s.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s did not finish\nserve:\n%s", runID, s.output())
	return runview.Run{}
}
