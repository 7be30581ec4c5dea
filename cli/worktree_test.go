package cli

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile"
)

// checkoutPrint is the user's checkout as bytes: every file outside .git
// with its content's hash, plus HEAD, the branch and git's status.
func checkoutPrint(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %x\n", rel, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString(gitOut(t, dir, "rev-parse", "HEAD") + "\n" + gitOut(t, dir, "symbolic-ref", "-q", "HEAD") + "\n")
	b.WriteString(gitOut(t, dir, "status", "--porcelain", "--ignored"))
	return b.String()
}

// dirtyCheckout gives the user's checkout uncommitted changes, an ignored
// .env and a .worktreeinclude that names it.
func dirtyCheckout(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"doc.go":            "package calc // the user's change\n",
		"notes.txt":         "the user's notes\n",
		".env":              "SECRET=1\n",
		".git/info/exclude": ".env\n",
		".worktreeinclude":  ".env\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// phaseTrees is the subjects and trees of the commits on rev since base.
func phaseTrees(t *testing.T, dir, base, rev string) string {
	t.Helper()
	return gitOut(t, dir, "log", "--format=%s %T", base+".."+rev)
}

func TestRunWorksInItsOwnWorkTree(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GAFFER_REPRODUCIBLE_DATES": "1"}
	const runID = "r-20260101-ownwt1"
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	// The reference: the same run in place, in a clean checkout.
	ref, _, refScript := demoRepo(t)
	refBase := gitOut(t, ref, "rev-parse", "HEAD")
	if out, code := gafferEnv(t, env, "--repo", ref, "run", "--goal", goal, "--script", refScript, "--run-id", runID, "--auto-approve", "--in-place"); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, out)
	}
	want := phaseTrees(t, ref, refBase, "HEAD")

	dir, _, script := demoRepo(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	dirtyCheckout(t, dir)
	before := checkoutPrint(t, dir)
	out, code := gafferEnv(t, env, "--repo", dir, "run", "--goal", goal, "--script", script, "--run-id", runID, "--auto-approve", "--in-place=false")
	if code != 0 {
		t.Fatalf("run on a dirty checkout: exit %d\n%s", code, out)
	}
	hint := "Branch gaffer/" + runID + " holds the run's commits: gaffer --repo " + dir + " merge " + runID + " takes them into your branch (or open a PR from it)"
	if !strings.Contains(out, hint) {
		t.Errorf("no hint %q in\n%s", hint, out)
	}
	if after := checkoutPrint(t, dir); after != before {
		t.Errorf("the user's checkout changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if got := phaseTrees(t, dir, base, "gaffer/"+runID); got != want {
		t.Errorf("branch gaffer/%s:\n%s\nwant (the run in place)\n%s", runID, got, want)
	}
	if _, err := os.Stat(filepath.Join(host.WorkTreesDir(filepath.Join(dir, ".git", "gaffer")), runID)); !os.IsNotExist(err) {
		t.Errorf("the finished run's work tree is still there: %v", err)
	}
	if out, _ := gafferEnv(t, env, "--repo", dir, "status", runID); !strings.Contains(out, "branch:    gaffer/"+runID) {
		t.Errorf("status does not name the branch:\n%s", out)
	}
}

// TestServeRunsOneRepositoryInParallelAndSurvivesKills runs 4 runs of one
// repository at once in a real `gaffer serve --workers 4`, SIGKILLs serve
// at seeded random moments and starts it again, and checks that each run's
// branch has the commits (trees) of a clean run of the same plan, and that
// the user's dirty checkout never changed. GAFFER_KILL_SEED picks another
// seed.
func TestServeRunsOneRepositoryInParallelAndSurvivesKills(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	seed := killSeed(t, 20260113)
	rng := rand.New(rand.NewPCG(seed, 0))
	env := []string{"GAFFER_REPRODUCIBLE_DATES=1"}
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	ids := []string{"r-20260101-par000", "r-20260101-par001", "r-20260101-par002", "r-20260101-par003"}

	// The references: each run alone, in place, in a clean checkout.
	want := make([]string, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		ref, _, script := demoRepo(t)
		base := gitOut(t, ref, "rev-parse", "HEAD")
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := startProc(t, bin, []string{"--repo", ref, "run", "--goal", goal, "--script", script, "--run-id", id,
				"--auto-approve", "--in-place"}, env...)
			if out, code := p.wait(); code != 0 {
				t.Errorf("reference run %s: exit %d\n%s", id, code, out)
				return
			}
			want[i] = phaseTrees(t, ref, base, "HEAD")
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	env = append(env, "GAFFER_IN_PLACE=false")
	dir, _, script := demoRepo(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	dirtyCheckout(t, dir)
	before := checkoutPrint(t, dir)
	s := startServeEnv(t, bin, dir, env, "--workers", "4")
	for _, id := range ids {
		if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", id,
			"--auto-approve", "--pace", "20ms"); code != 0 {
			t.Fatalf("submit %s: exit %d\n%s", id, code, out)
		}
	}
	for k := 1; k <= 3; k++ {
		delay := time.Duration(200+rng.IntN(2500)) * time.Millisecond
		time.Sleep(delay)
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Logf("kill %d: serve SIGKILLed after %s; its output:\n%s", k, delay, s.output())
		if after := checkoutPrint(t, dir); after != before {
			t.Fatalf("kill %d: the user's checkout changed:\nbefore\n%s\nafter\n%s", k, before, after)
		}
		s = startServeEnv(t, bin, dir, env, "--workers", "4")
	}
	for i, id := range ids {
		waitStatus(t, bin, dir, id, "completed", s)
		if got := phaseTrees(t, dir, base, "gaffer/"+id); got != want[i] {
			t.Errorf("branch gaffer/%s:\n%s\nwant (the run alone, in place)\n%s", id, got, want[i])
		}
	}
	if after := checkoutPrint(t, dir); after != before {
		t.Errorf("the user's checkout changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	// A kill may land between a run's last checkpoint and the removal of
	// its work tree; the next command that opens the store sweeps it.
	s.stop(9)
	if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "list"); code != 0 {
		t.Fatalf("list after serve: exit %d\n%s", code, out)
	}
	if left, _ := os.ReadDir(host.WorkTreesDir(filepath.Join(dir, ".git", "gaffer"))); len(left) != 0 {
		t.Errorf("work trees left after every run ended: %v", left)
	}
}
