package badger

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// TestOpenBesideProcessStarts opens new stores while other goroutines of
// the process start processes, as gaffer starts git and agents beside
// its store: a child forked while Open held its own lock on the directory
// shares that lock until it execs, and must not make Badger's lock, taken
// just after, fail as "in use by another process". Children in a user
// namespace are not vforked, so the parent goes on while they have yet to
// exec.
func TestOpenBesideProcessStarts(t *testing.T) {
	attr := &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if err := (&exec.Cmd{Path: "/bin/true", SysProcAttr: attr}).Run(); err != nil {
		attr = nil // no user namespaces here: vforked children only
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = (&exec.Cmd{Path: "/bin/true", SysProcAttr: attr}).Run()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	// New stores (gaffer's own lock, then Badger's), and a store with
	// tables and no memtable log (gaffer's lock, Badger's read-only open
	// for the checks, then Badger's lock).
	old := t.TempDir()
	fillStore(t, old, 3)
	for i := range 12 {
		// Without its list of checked tables, each open of the old store
		// checks them again, read-only first.
		if err := os.Remove(filepath.Join(old, verifiedFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		for _, dir := range []string{t.TempDir(), old} {
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("open %d beside process starts: %v", i, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
