package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCancelAtEveryMomentOfARun starts `gaffer run` as a process and,
// once it holds the store (its socket is there), runs `gaffer cancel` from
// another process after a delay that moves through the run's life: its
// work tree being made, its first checkpoint, its phases. Whenever the
// cancel is answered the run ends cancelled (exit 5), and a run cancelled
// before its first checkpoint leaves nothing: no run in the store, no
// branch, no work tree. The cancel is never refused with "no run".
func TestCancelAtEveryMomentOfARun(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	for i, delay := range []time.Duration{0, 5, 10, 20, 30, 45, 60, 80, 100, 130, 160, 200, 300, 500, 800} {
		delay *= time.Millisecond
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			dir, plan, script := demoRepo(t)
			id := fmt.Sprintf("r-c%02d", i)
			run := exec.Command(bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id)
			out, done := startCaptured(t, run)
			sock := filepath.Join(dir, ".git", "gaffer.sock")
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
				if _, err := os.Lstat(sock); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the run opened no socket:\n%s", out.String())
				}
			}
			time.Sleep(delay)
			cout, ccode := gafferCmd(t, bin, "--repo", dir, "cancel", id)
			waitExit(t, done, 60*time.Second, "run", out.String)
			code := run.ProcessState.ExitCode()
			if ccode == 0 && code != ExitHalted {
				t.Errorf("cancel answered (%s) but the run exited %d, want %d:\n%s", strings.TrimSpace(cout), code, ExitHalted, out.String())
			}
			if ccode != 0 && code != 0 {
				t.Errorf("cancel exit %d (%s) and the run exit %d:\n%s", ccode, strings.TrimSpace(cout), code, out.String())
			}
			if strings.Contains(out.String(), "resume "+id) && code != 0 {
				t.Errorf("the run offers a resume after a cancel:\n%s", out.String())
			}
			v, err := tryStatus(bin, dir, id)
			if err != nil {
				// No run in the store: nothing of it may stay.
				if b := gitOut(t, dir, "branch", "--list", "gaffer/"+id); b != "" {
					t.Errorf("no run %s in the store, but its branch stays: %s", id, b)
				}
				if wt := gitOut(t, dir, "worktree", "list"); strings.Contains(wt, id) {
					t.Errorf("no run %s in the store, but its work tree stays:\n%s", id, wt)
				}
				return
			}
			if ccode == 0 && v.Status != "cancelled" {
				t.Errorf("run %s is %s after its cancel, want cancelled", id, v.Status)
			}
			if wt := gitOut(t, dir, "worktree", "list"); strings.Contains(wt, id) {
				t.Errorf("run %s ended (%s) but its work tree stays:\n%s", id, v.Status, wt)
			}
		})
	}
}
