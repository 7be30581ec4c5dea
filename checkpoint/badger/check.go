package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// checkTables opens and checksums every table file before Badger sees
// them. Badger opens tables in goroutines of its own, where a truncated
// file panics out of reach of any recover; here the panic is ours to turn
// into an error.
// Only tables the MANIFEST lists are checked (Badger deletes the others),
// each with the compression the MANIFEST records for it.
//
// It returns every table's stamp (nil for a new store), to list in
// verifiedFile once the store has opened: a failed open changes no file.
//
// judged is true when the tables are exactly those verifiedFile lists and
// it names this build's format marker: the open that wrote it found the
// marker in them, and a store's marker changes only with its tables.
func checkTables(dir string) (verified map[uint64]tableStamp, judged bool, err error) {
	f, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if errors.Is(err, fs.ErrNotExist) {
		if orphans := unlistedTables(dir, badger.Manifest{}); len(orphans) > 0 {
			return nil, false, damagef("MANIFEST is missing but %d table files (%s ...) are not; opening would delete them",
				len(orphans), orphans[0])
		}
		return nil, false, nil // a new store
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	defer func() {
		if r := recover(); r != nil {
			err = damagef("MANIFEST: unreadable: %v", r)
		}
	}()
	m, valid, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil {
		return nil, false, damagef("MANIFEST: %v", err)
	}
	// Badger truncates a damaged MANIFEST to its last good change and then
	// deletes every table it no longer lists. Refuse instead of losing them.
	if info, err := f.Stat(); err == nil && valid < info.Size() {
		if orphans := unlistedTables(dir, m); len(orphans) > 0 {
			return nil, false, damagef("MANIFEST is damaged after byte %d and no longer lists %d table files (%s ...); opening would delete them",
				valid, len(orphans), orphans[0])
		}
	}
	listed, marker := readVerified(dir)
	// The tables are checked on every core: a large store has hundreds.
	ids := slices.Sorted(maps.Keys(m.Tables))
	stamps := make([]tableStamp, len(ids))
	errs := make([]error, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), 4, len(ids))) {
		wg.Go(func() {
			tail := make([]byte, tableTailBytes)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ids) {
					return
				}
				stamps[i], errs[i] = checkListedTable(dir, ids[i], m.Tables[ids[i]].Compression, listed, tail)
			}
		})
	}
	wg.Wait()
	now := make(map[uint64]tableStamp, len(ids))
	for i, err := range errs {
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, false, err // unreadable (permission denied, a failing disk), not damaged
			}
			return nil, false, damagef("table %s: %v", filepath.Base(table.NewFilename(ids[i], dir)), err)
		}
		now[ids[i]] = stamps[i]
	}
	return now, maps.Equal(now, listed) && marker == markerValue, nil
}

// checkListedTable checks table id of dir: its footer and index when
// listed has it with the file's size and time (Badger opens tables on
// goroutines of its own, and its way out of a damaged one races), every
// block otherwise. It returns the file's stamp; tail is a buffer of
// tableTailBytes for checkTableIndexOf.
func checkListedTable(dir string, id uint64, compression options.CompressionType, listed map[uint64]tableStamp, tail []byte) (_ tableStamp, err error) {
	defer func() { // on a goroutine of checkTables', out of reach of its recover
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable: %s", oneLine(fmt.Sprint(r)))
		}
	}()
	path := table.NewFilename(id, dir)
	f, err := os.Open(path)
	if err != nil {
		return tableStamp{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return tableStamp{}, err
	}
	stamp := tableStamp{size: info.Size(), mtime: info.ModTime().UnixNano()}
	if listed[id] == stamp && stamp.size > 0 {
		return stamp, checkTableIndexOf(f, stamp.size, tail)
	}
	return stamp, checkTable(path, compression)
}

// verifiedFile lists the table files whose every block checkTables has
// checksummed, each with its size and modification time. A table file
// never changes once Badger has written it, so the next open checks only
// the footer and index of one listed with the same size and time (Badger
// then checks each block as it reads it, options.OnBlockRead): opening a
// store costs what its new tables cost, not what all of them hold.
const verifiedFile = "GAFFER-VERIFIED"

// verifiedHeader is the first line of verifiedFile.
const verifiedHeader = "gaffer-verified-tables/1"

// tableStamp is what verifiedFile keeps of a table file.
type tableStamp struct {
	size, mtime int64
}

// readVerified returns the tables verifiedFile lists, none when it is
// missing or not of this format (every table is then checked whole), and
// the format marker of the store the open that wrote it judged ("" when
// the file does not say: an older gaffer wrote it).
func readVerified(dir string) (tables map[uint64]tableStamp, marker string) {
	b, err := os.ReadFile(filepath.Join(dir, verifiedFile))
	if err != nil {
		return nil, ""
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) == 0 || lines[0] != verifiedHeader {
		return nil, ""
	}
	out := make(map[uint64]tableStamp, len(lines))
	for _, l := range lines[1:] {
		if m, ok := strings.CutPrefix(l, verifiedMarker); ok {
			marker = m
			continue
		}
		var id uint64
		var st tableStamp
		if n, err := fmt.Sscanf(l, "%d %d %d", &id, &st.size, &st.mtime); err == nil && n == 3 {
			out[id] = st
		}
	}
	return out, marker
}

// verifiedMarker starts verifiedFile's line naming the format marker the
// store held when the file was written (an older gaffer skips the line).
const verifiedMarker = "marker "

// writeVerified replaces verifiedFile with tables, through a temporary
// file and a rename: a kill leaves the old list or the new one. A store
// that cannot be written (read-only) keeps checking every table. Call it
// only once the store's marker has been judged to be this build's.
func writeVerified(dir string, tables map[uint64]tableStamp) {
	var b strings.Builder
	b.WriteString(verifiedHeader + "\n")
	b.WriteString(verifiedMarker + markerValue + "\n")
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		st := tables[id]
		fmt.Fprintf(&b, "%d %d %d\n", id, st.size, st.mtime)
	}
	tmp := filepath.Join(dir, verifiedFile+".tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, filepath.Join(dir, verifiedFile)); err != nil {
		os.Remove(tmp)
	}
}

func checkTable(path string, compression options.CompressionType) (err error) {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Size() == 0 {
		return fmt.Errorf("file is empty")
	}
	if err := checkTableIndex(path, info.Size()); err != nil {
		return err
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			mf.Close(-1)
			err = fmt.Errorf("unreadable: %s", oneLine(fmt.Sprint(r)))
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

// checkTableIndex checks a table file's footer and the checksum of its
// index the way Badger's table.OpenTable reads them, but with bounds checks:
// on a truncated file OpenTable panics with a multi-line dump of the footer.
// From the end of the file: the checksum's length (4 bytes, big endian), the
// checksum (a pb.Checksum message), the index's length (4 bytes), the index.
func checkTableIndex(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkTableIndexOf(f, size, make([]byte, tableTailBytes))
}

// checkTableIndexOf is checkTableIndex of the open file f, tail a buffer
// of tableTailBytes.
func checkTableIndexOf(f *os.File, size int64, tail []byte) error {
	// The file's tail, which usually holds the whole index: one read, not
	// four, for each of a large store's hundreds of tables.
	tail = tail[:min(size, int64(len(tail)))]
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return err
	}
	// at returns the n bytes at off, from the tail when it holds them.
	at := func(off, n int64) ([]byte, error) {
		if start := off - (size - int64(len(tail))); start >= 0 {
			return tail[start : start+n], nil
		}
		b := make([]byte, n)
		_, err := f.ReadAt(b, off)
		return b, err
	}
	u32 := func(off int64) (int64, error) {
		b, err := at(off, 4)
		if err != nil {
			return 0, err
		}
		return int64(binary.BigEndian.Uint32(b)), nil
	}
	truncated := fmt.Errorf("truncated: the index footer points outside the file's %d bytes", size)
	pos := size - 4
	if pos < 4 {
		return truncated
	}
	chkLen, err := u32(pos)
	if err != nil {
		return err
	}
	if pos -= chkLen + 4; chkLen > size-8 || pos < 0 {
		return truncated
	}
	chk, err := at(pos+4, chkLen)
	if err != nil {
		return err
	}
	algo, sum, ok := parseChecksum(chk)
	if !ok {
		return fmt.Errorf("the index checksum is unreadable")
	}
	idxLen, err := u32(pos)
	if err != nil {
		return err
	}
	if idxLen > pos {
		return truncated
	}
	idx, err := at(pos-idxLen, idxLen)
	if err != nil {
		return err
	}
	if y.CalculateChecksum(idx, algo) != sum {
		return fmt.Errorf("index checksum mismatch")
	}
	return nil
}

// tableTailBytes is how much of a table's end checkTableIndex reads at
// first: a 256 KiB table's index and bloom filter take a few KiB.
const tableTailBytes = 16 << 10

// parseChecksum decodes a pb.Checksum message: field 1 the algorithm, field
// 2 the sum, both varints. It accepts only the algorithms Badger knows.
func parseChecksum(b []byte) (algo pb.Checksum_Algorithm, sum uint64, ok bool) {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, 0, false
		}
		b = b[n:]
		v, m := binary.Uvarint(b)
		if m <= 0 || tag&7 != 0 { // every field of Checksum is a varint
			return 0, 0, false
		}
		b = b[m:]
		switch tag >> 3 {
		case 1:
			algo = pb.Checksum_Algorithm(v)
		case 2:
			sum = v
		}
	}
	switch algo {
	case pb.Checksum_CRC32C, pb.Checksum_XXHash64:
		return algo, sum, true
	}
	return 0, 0, false
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

// lockDirShared takes the lock Badger takes for a read-only open (a
// shared flock on the directory), so that no writer opens the store
// while openReadOnly checks its files; the caller releases it once
// Badger, whose own shared lock then covers the store, has opened it.
func lockDirShared(dir string) (unlock func(), err error) {
	return flockDir(dir, syscall.LOCK_SH)
}

// releaseLock drops the flock f holds, then closes f. Closing alone is
// not enough: a child this process forks while f is open (gaffer starts
// git and agents beside its store) shares f's open file, and with it the
// lock, until it execs, so Badger's own lock, taken just after, failed as
// held by another process (TestOpenBesideProcessStarts).
func releaseLock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// lockDir takes the lock Badger takes (flock on the directory) so the
// checks above never read files another process is writing. The caller
// releases it just before handing the directory to Badger, whose own lock
// then covers the store.
func lockDir(dir string) (unlock func(), err error) {
	return flockDir(dir, syscall.LOCK_EX)
}

// flockDir takes how (LOCK_SH or LOCK_EX) on dir. A lock that is taken
// is tried again for up to lockRetries*lockRetryWait: a store this process
// closed a moment ago may still be locked by a child forked before the
// close, until the child execs (Badger's Close closes its lock's file
// without unlocking it; see releaseLock).
func flockDir(dir string, how int) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: open store %s: %w", dir, err)
	}
	err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	for wait := 0; errors.Is(err, syscall.EWOULDBLOCK) && wait < lockRetries; wait++ {
		time.Sleep(lockRetryWait)
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &lockedError{dir: dir}
		}
		return nil, fmt.Errorf("checkpoint: lock store %s: %w", dir, err)
	}
	return func() { releaseLock(f) }, nil
}
