package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// prevStoreRoot is where testdata/prevstore/prev-9c44d1a.tar.gz unpacks:
// the stores in it name their runs' work trees, scripts and plans by
// absolute path, as a user's store does, so the fixture goes back where
// it was made.
const prevStoreRoot = "/tmp/gaffer-prev-fixture"

// TestPreviousReleaseStoreFinishes takes the store written by the
// previous release (commit 9c44d1a; testdata/prevstore/README.md says
// how) — runs stopped at approval, mid-phase and mid-review, in their own
// work trees and in place, in real git repositories — and finishes every
// run with this binary: approve for the one waiting, resume for the
// killed ones. Each must end completed, with every task's files on its
// branch (or in place on the checkout's, with a clean tree) and no work
// tree left.
func TestPreviousReleaseStoreFinishes(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	unpackPrevStore(t)
	phased := map[string]string{"hello_test.txt": "hello is tested\n", "bye_test.txt": "bye is tested\n", "hello.txt": "hello\n", "bye.txt": "bye\n"}
	task := map[string]string{"notes.txt": "v2\n", "todo.txt": "- one thing\n"}
	cases := []struct {
		run, cmd string
		files    map[string]string
		commits  int // the run's commits on the base: one per phase and the record
	}{
		{"r-20260101-approval", "approve", phased, 3},
		{"r-20260101-midphase", "resume", phased, 3},
		{"r-20260101-midreview", "resume", task, 3},
	}
	for _, m := range runModes {
		for _, c := range cases {
			dir := filepath.Join(prevStoreRoot, "own")
			if m.inPlace {
				dir = filepath.Join(prevStoreRoot, "inplace-"+strings.TrimPrefix(c.run, "r-20260101-"))
			}
			name := m.name + "/" + c.run
			out, err := exec.Command(bin, "--repo", dir, c.cmd, c.run).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: gaffer %s: %v\n%s", name, c.cmd, err, out)
			}
			if st := runStatusJSON(t, bin, dir, c.run); st.Status != "completed" {
				t.Fatalf("%s: status %q after %s\n%s", name, st.Status, c.cmd, out)
			}
			rev := m.rev(c.run)
			for f, want := range c.files {
				if got := gitOut(t, dir, "show", rev+":"+f) + "\n"; got != want {
					t.Errorf("%s: %s on %s is %q, want %q", name, f, rev, got, want)
				}
			}
			if got := gitOut(t, dir, "rev-list", "--count", rev); got != strconv.Itoa(c.commits+1) {
				t.Errorf("%s: %s commits on %s, want %d:\n%s", name, got, rev, c.commits, gitOut(t, dir, "log", "--format=%s", rev))
			}
			if m.inPlace {
				if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
					t.Errorf("%s: the checkout is not clean:\n%s", name, st)
				}
			}
			m.workTreeGone(t, dir, c.run)
		}
	}
}

// unpackPrevStore unpacks the previous release's store at prevStoreRoot,
// holding a lock so that two test processes take turns, and removes it
// when the test ends.
func unpackPrevStore(t *testing.T) {
	t.Helper()
	lock, err := os.OpenFile(prevStoreRoot+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.RemoveAll(prevStoreRoot)
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		_ = lock.Close()
	})
	if err := os.RemoveAll(prevStoreRoot); err != nil {
		t.Fatal(err)
	}
	tarball, err := filepath.Abs(filepath.Join("testdata", "prevstore", "prev-9c44d1a.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-C", filepath.Dir(prevStoreRoot), "-xzf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tarball, err, out)
	}
}

// runStatusJSON is `gaffer --repo dir status run --json`.
func runStatusJSON(t *testing.T, bin, dir, run string) runview.Run {
	t.Helper()
	out, err := exec.Command(bin, "--repo", dir, "status", run, "--json").Output()
	if err != nil {
		t.Fatalf("status %s: %v\n%s", run, err, out)
	}
	var v runview.Run
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("status %s: %v\n%s", run, err, out)
	}
	return v
}
