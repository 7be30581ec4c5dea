package cli

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestRunsStartBesideAStatusLoop: while two loops run `gaffer status`
// (and `gaffer list`) as fast as they can, as a user watching in another
// terminal would, ten `gaffer run`s start one after another, through the
// binary: each starts (it waits for the run's approval, exit 4), none is
// refused as "store in use" (exit 7, 3 to 7 times in 10 before), and
// every status and list answers.
func TestRunsStartBesideAStatusLoop(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-first"); code != ExitAwaitingApproval {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	reads, failed := 0, []string{}
	for _, cmd := range []string{"status", "list"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				out, err := exec.Command(bin, "--repo", dir, cmd).CombinedOutput()
				mu.Lock()
				reads++
				if err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v: %s", cmd, err, out))
				}
				mu.Unlock()
			}
		}()
	}
	started, waited := 0, 0
	for i := range 10 {
		id := fmt.Sprintf("r-beside%02d", i)
		out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", id)
		if code == ExitAwaitingApproval {
			started++
		} else {
			t.Errorf("run %s beside the status loop: exit %d, want %d\n%s", id, code, ExitAwaitingApproval, out)
		}
		if strings.Contains(out, "waiting for the gaffer commands reading the store") {
			waited++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d of 10 runs started (%d said they waited for readers), beside %d reads", started, waited, reads)
	for _, f := range failed {
		t.Errorf("a read beside the runs failed: %s", f)
	}
}
