package badger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestBadgerStoreOfAnotherUserIsRefused gives a closed store to another
// uid, as `sudo gaffer status` in a user's repository meets it. Root could
// open it, and every file Badger then makes (a new value log, a memtable
// log) would be root's, 0600: the owner's next command could no longer
// read its own store and was told it was damaged. The open must be refused
// as a foreign store, naming the owner, and change nothing.
func TestBadgerStoreOfAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the store to another uid")
	}
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(bg, loopCheckpoint("r", 1, loopPayload()), checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	const other = 54321
	err = filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, other, other)
	})
	if err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	s, err = Open(dir, Options{})
	if err == nil {
		s.Close()
		t.Fatal("root opened a store that belongs to another uid")
	}
	t.Logf("open: %v", err)
	if !errors.Is(err, checkpoint.ErrForeignStore) || !strings.Contains(err.Error(), "54321") || !strings.Contains(err.Error(), dir) {
		t.Errorf("open error %q, want a foreign store naming the store and its owner's uid", err)
	}
	if after := treeHash(t, dir); after != before {
		t.Error("the refused open changed the store's files")
	}
	var owners []string
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Sys().(*syscall.Stat_t).Uid != other {
			owners = append(owners, path)
		}
		return nil
	})
	if len(owners) > 0 {
		t.Errorf("files not the owner's after the refused open: %v", owners)
	}
}
