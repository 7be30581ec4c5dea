package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gafferEntries lists the gaffer-* entries of dir.
func gafferEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "gaffer-") {
			got = append(got, e.Name())
		}
	}
	return got
}

// TestRunLeavesNoTempDirs: a whole scripted run, confined (the default),
// its commands run in temporary directories of their own and share Go
// caches' layers in another; stopped at each approval and resumed, it
// leaves no gaffer-* entry in its TMPDIR.
func TestRunLeavesNoTempDirs(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-tmp")
	for i := 0; code == ExitAwaitingApproval && i < 20; i++ {
		if got := gafferEntries(t, tmp); len(got) > 0 {
			t.Fatalf("waiting for approval, the run left %v in its TMPDIR\n%s", got, out)
		}
		out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "approve", "r-tmp")
	}
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if got := gafferEntries(t, tmp); len(got) > 0 {
		t.Fatalf("the finished run left %v in its TMPDIR", got)
	}
}

// TestKilledRunsTempDirsGoAtTheNextStart: a run killed with SIGKILL while
// its command runs leaves its temporary directories, named for its pid;
// the next gaffer to start removes them, and never a live run's, which
// `gaffer prune` removes once that run is killed too.
func TestKilledRunsTempDirsGoAtTheNextStart(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)
	// start starts a run whose first command runs until it is killed,
	// and returns it once its command's directories are there.
	start := func(name string) (kill func(), dir string, dirs []string) {
		dir, plan, script := demoRepo(t)
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		// Both lanes of phase 1 sleep; the script is beside its plan_file.
		sleeper := filepath.Join(filepath.Dir(script), name+".yaml")
		text := strings.ReplaceAll(string(b), "- run: gofmt -l .", "- run: sleep 600")
		if err := os.WriteFile(sleeper, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		run := exec.Command(bin, "--repo", dir, "run", "--plan", plan, "--script", sleeper, "--auto-approve", "--run-id", "r-"+name)
		run.Env = env
		log := filepath.Join(t.TempDir(), name+".out")
		f, err := os.Create(log)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		run.Stdout, run.Stderr = f, f
		out := func() string { b, _ := os.ReadFile(log); return string(b) }
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = run.Wait(); close(done) }()
		kill = func() { _ = run.Process.Kill(); <-done }
		t.Cleanup(kill)
		mine := fmt.Sprintf("-p%d-", run.Process.Pid)
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			var got []string
			for _, e := range gafferEntries(t, tmp) {
				if strings.Contains(e, mine) {
					got = append(got, e)
				}
			}
			if slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, "gaffer-cmd-") }) {
				return kill, dir, got
			}
			select {
			case <-done:
				t.Fatalf("run %s ended before its command:\n%s", name, out())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s made no command directory in %s: %v\n%s", name, tmp, gafferEntries(t, tmp), out())
			}
		}
	}
	exists := func(names []string) []string {
		var there []string
		for _, n := range names {
			if _, err := os.Lstat(filepath.Join(tmp, n)); err == nil {
				there = append(there, n)
			}
		}
		return there
	}

	kill, _, killedDirs := start("killed")
	kill()
	if got := exists(killedDirs); len(got) == 0 {
		t.Fatalf("the killed run's directories %v are gone before any sweep", killedDirs)
	}
	// The next start, in another repository, removes them.
	killLive, liveRepo, liveDirs := start("live")
	if got := exists(killedDirs); len(got) > 0 {
		t.Fatalf("the next start left the killed run's %v", got)
	}
	// A prune beside the live run keeps its directories.
	otherRepo, _, _ := demoRepo(t)
	if out, code := gafferCmdEnv(t, bin, []string{"TMPDIR=" + tmp}, "--repo", otherRepo, "prune", "--yes"); code != 0 {
		t.Fatalf("prune: exit %d\n%s", code, out)
	}
	if got := exists(liveDirs); !slices.Equal(got, liveDirs) {
		t.Fatalf("prune beside a live run removed its directories: had %v, left %v", liveDirs, got)
	}
	// Once it is killed, prune on its store ends its command and
	// removes them.
	killLive()
	if out, code := gafferCmdEnv(t, bin, []string{"TMPDIR=" + tmp}, "--repo", liveRepo, "prune", "--yes"); code != 0 {
		t.Fatalf("prune: exit %d\n%s", code, out)
	}
	if got := gafferEntries(t, tmp); len(got) > 0 {
		t.Fatalf("after prune, %v are left in TMPDIR", got)
	}
}
