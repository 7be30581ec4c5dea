package nodes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestRecoverGitLocks(t *testing.T) {
	h := newHarness(t, "{}")
	gd := filepath.Join(h.dir, ".git")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true command")
	}
	for _, c := range []struct {
		name    string
		pid     int
		removed bool
	}{
		{"a dead gaffer's locks go", dead.Process.Pid, true},
		{"a live process's locks stay", os.Getppid(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, gd, opMarker, strconv.Itoa(c.pid)+"\n")
			writeFile(t, gd, "index.lock", "")
			writeFile(t, filepath.Join(gd, "refs", "heads"), "main.lock", "")
			removed, err := RecoverGitLocks(h.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(removed) == 2; got != c.removed {
				t.Fatalf("removed %q", removed)
			}
			_, err = os.Stat(filepath.Join(gd, "index.lock"))
			if os.IsNotExist(err) != c.removed {
				t.Fatalf("index.lock: %v", err)
			}
			os.Remove(filepath.Join(gd, "index.lock"))
			os.Remove(filepath.Join(gd, "refs", "heads", "main.lock"))
			os.Remove(filepath.Join(gd, opMarker))
		})
	}
	if removed, err := RecoverGitLocks(h.dir); err != nil || removed != nil {
		t.Fatalf("without a marker: %q %v", removed, err)
	}
}
