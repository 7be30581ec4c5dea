package workspace

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/gitcmd"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
)

// A git command that fails for the machine (git says so in its standard
// error) is the machine's fault to ioerr.Machine, as a failed write of
// gaffer's own is; any other failure is not. The message stays git's.
func TestGitErrorNamesTheMachinesFault(t *testing.T) {
	for _, c := range []struct {
		stderr string
		want   error
	}{
		{"Preparing worktree (new branch 'gaffer/r-1')\nfatal: could not write to '/wt/r-1/.git': No space left on device", syscall.ENOSPC},
		{"error: unable to write file a.txt: Disk quota exceeded", syscall.EDQUOT},
		{"fatal: cannot create directory at 'x': Read-only file system", syscall.EROFS},
		{"fatal: read error: Input/output error", syscall.EIO},
		{"fatal: invalid reference: main", nil},
		{"fatal: 'dir' already exists", nil},
	} {
		err := &gitcmd.Error{Msg: "git worktree add: " + c.stderr, Errno: ioerr.Named(c.stderr)}
		if got := ioerr.Machine(err); got != (c.want != nil) {
			t.Errorf("%q: machine = %v, want %v", c.stderr, got, c.want != nil)
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%q: does not match %v", c.stderr, c.want)
		}
		if err.Error() != "git worktree add: "+c.stderr {
			t.Errorf("message %q changed", err.Error())
		}
	}
}

// AddWorkTree on a disk that other work trees filled fails with an error
// ioerr.Machine knows (serve then waits and tries the run again instead
// of failing it). (A checkout bigger than the room left is not told: git
// says "unable to write file" then, without the cause.)
func TestAddWorkTreeOnAFullDiskIsTheMachinesFault(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	full := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", full).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", full, err, out)
		}
	})
	// The other runs' work trees fill the disk.
	if err := os.WriteFile(filepath.Join(full, "others"), make([]byte, 64<<10), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	_, err := f.repo.AddWorkTree(f.ctx, filepath.Join(full, "r-1"), "gaffer/r-1", base)
	if err == nil {
		t.Fatal("AddWorkTree on a full disk succeeded")
	}
	if !ioerr.Machine(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("AddWorkTree on a full disk: %v, want an error matching ENOSPC", err)
	}
}
