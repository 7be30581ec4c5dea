package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// checkTables opens and checksums every table file before Badger sees
// them. Badger opens tables in goroutines of its own, where a truncated
// file panics out of reach of any recover; here the panic is ours to turn
// into an error.
// Only tables the MANIFEST lists are checked (Badger deletes the others),
// each with the compression the MANIFEST records for it.
func checkTables(dir string) (err error) {
	f, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if errors.Is(err, fs.ErrNotExist) {
		if orphans := unlistedTables(dir, badger.Manifest{}); len(orphans) > 0 {
			return fmt.Errorf("%w: MANIFEST is missing but %d table files (%s ...) are not; opening would delete them",
				ErrCorrupt, len(orphans), orphans[0])
		}
		return nil // a new store
	}
	if err != nil {
		return err
	}
	defer f.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: MANIFEST: unreadable: %v", ErrCorrupt, r)
		}
	}()
	m, valid, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil {
		return fmt.Errorf("%w: MANIFEST: %v", ErrCorrupt, err)
	}
	// Badger truncates a damaged MANIFEST to its last good change and then
	// deletes every table it no longer lists. Refuse instead of losing them.
	if info, err := f.Stat(); err == nil && valid < info.Size() {
		if orphans := unlistedTables(dir, m); len(orphans) > 0 {
			return fmt.Errorf("%w: MANIFEST is damaged after byte %d and no longer lists %d table files (%s ...); opening would delete them",
				ErrCorrupt, valid, len(orphans), orphans[0])
		}
	}
	for id, tm := range m.Tables {
		path := table.NewFilename(id, dir)
		if err := checkTable(path, tm.Compression); err != nil {
			return fmt.Errorf("%w: table %s: %v", ErrCorrupt, filepath.Base(path), err)
		}
	}
	return nil
}

func checkTable(path string, compression options.CompressionType) (err error) {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Size() == 0 {
		return fmt.Errorf("file is empty")
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			mf.Close(-1)
			err = fmt.Errorf("unreadable: %v", r)
		}
	}()
	t, err := table.OpenTable(mf, table.Options{
		ReadOnly:           true,
		BlockSize:          4 << 10,
		BloomFalsePositive: 0.01,
		ChkMode:            options.OnTableRead,
		Compression:        compression,
	})
	if err != nil {
		return err
	}
	return t.MmapFile.Close(-1)
}

// unlistedTables returns the table files on disk that m does not list.
func unlistedTables(dir string, m badger.Manifest) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var out []string
	for _, f := range files {
		id, ok := table.ParseFileID(filepath.Base(f))
		if _, listed := m.Tables[id]; ok && !listed {
			out = append(out, filepath.Base(f))
		}
	}
	return out
}

// lockDir takes the lock Badger takes (flock on the directory) so the
// checks above never read files another process is writing. The caller
// releases it just before handing the directory to Badger, whose own lock
// then covers the store.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: open store %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &lockedError{dir: dir}
		}
		return nil, fmt.Errorf("checkpoint: lock store %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
