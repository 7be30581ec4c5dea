package badger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
)

// MaxValueSize is the largest single value (or pending write) the Badger
// store accepts; Put fails with ErrInvalid above it.
const MaxValueSize = 15 << 20

// valueLogFileSize bounds Badger's value-log files, where values over 64 KiB
// go; it must exceed MaxValueSize.
const valueLogFileSize = 16 << 20

// valueThreshold is the size from which Badger keeps a value in its value
// log instead of in the LSM tree.
const valueThreshold = 64 << 10

// blockSize and baseTableSize bound the memory of Badger's table
// builders, which hold a whole table uncompressed (and its compressed
// blocks) while they write it, several at once during a compaction, and
// keep their buffers in a pool afterwards. A table's size counts
// compressed bytes, and checkpoints' JSON compresses about tenfold, so a
// 1 MiB table holds ~10 MiB in a builder; and a phase chunk (a few KiB to
// tens of KiB) overflowed a 4 KiB block, whose buffer a builder grows by
// doubling, keeping every old copy. With 64 KiB blocks (and, at first,
// tables), a 1,000-task run's peak RSS went from 312 to 205 MB
// (docs/performance.md) and its store from 9.4 to 3.8 MB (larger blocks
// compress better); the blocks did most of it, and the soft memory limit
// (internal/memlimit) the rest. Tables are 1 MiB: every command opens, checks
// and closes every table file (closing one syncs it), and a store of
// 10,000 runs is 534 files of 64 KiB, 170 of 256 KiB or 64 of 1 MiB;
// once the rest of list's work was gone, 256 KiB tables cost it 7 ms
// more than 1 MiB (94 against 87 ms), for the same peak of the 1,000-task
// run (135-140 MB with the soft memory limit). Deeper levels' tables
// grow by Badger's TableSizeMultiplier (2).
const (
	blockSize     = 64 << 10
	baseTableSize = 1 << 20
)

// Options configures Open. The zero value is a good default.
type Options struct {
	// Logger receives Badger's log lines. Nil keeps Badger silent.
	Logger *slog.Logger
	// SyncWrites makes every write durable, as if each Put had
	// PutOptions.Sync set.
	SyncWrites bool
	// BlobThreshold is the size above which a value is stored once as a
	// content-addressed blob instead of inline (default 64 bytes).
	BlobThreshold int
	// MemTableSize bounds Badger's in-memory table (default 8 MiB).
	MemTableSize int64
	// Now is the clock for lease expiry and run activity (default time.Now).
	Now func() time.Time
	// ProcessAlive reports whether a pid on this host is alive (default:
	// kill(pid, 0) does not fail with ESRCH).
	ProcessAlive func(pid int) bool
	// Reading opens the store for a process that only reads it (a
	// listing, a status). Where it can, Badger opens it read-only, shared
	// with other readers: no new log, no compaction, nothing synced at
	// close, and writes fail. A store that needs a writer first (logs a
	// killed process left to replay, a marker of a cut-short open or
	// close, no format marker yet) is opened for writing, as before, with
	// no compaction. While an open for writing waits for the readers
	// (WaitForReaders), a Reading open is refused as ErrLocked: readers
	// coming one after another never keep a writer out. A write to a
	// store Badger opened read-only fails with ErrReadOnly.
	Reading bool
	// WaitForReaders bounds how long an open for writing waits while the
	// store is held by Reading opens only, each of which lasts as long as
	// its command reads; 0 does not wait. A store held by another writer
	// is refused within 200 ms (flockDir), as ErrLocked, and so is one
	// held by a reader that had to open it for writing (see Reading).
	WaitForReaders time.Duration
	// OnWait, when set, is called once when an open starts to wait for
	// readers (to say so on the terminal).
	OnWait func()
}

func (o Options) validate() (Options, error) {
	if o.BlobThreshold == 0 {
		o.BlobThreshold = 64
	}
	if o.BlobThreshold < 0 {
		return o, fmt.Errorf("%w: negative BlobThreshold %d", checkpoint.ErrInvalid, o.BlobThreshold)
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 8 << 20
	}
	if o.MemTableSize < 1<<20 {
		return o, fmt.Errorf("%w: MemTableSize %d is below 1 MiB", checkpoint.ErrInvalid, o.MemTableSize)
	}
	return o, nil
}

// Store is a checkpoint.Store kept in a Badger v4 database in one
// directory. Each Put is one Badger transaction; ordering and fencing are
// checked inside it.
type Store struct {
	db   *badger.DB
	dir  string
	opts Options
	env  checkpoint.LeaseRules

	mu    sync.Mutex
	stamp int64 // last activity stamp handed out
	// stamped is true once loadStamp has read the newest stamp on disk.
	stamped bool
	wals    map[string]bool // memtable logs whose directory entry is synced
	known   knownBlobs      // blobs committed per run, so Put skips their lookup

	tokens tokenSource // fencing tokens, reserved on disk a block at a time
	syncer groupSync   // batches the flushes of concurrent Sync writes

	// readOnly is a store Badger opened read-only (Options.Reading).
	readOnly bool
	// letGo, when set, releases readerFile's flock of a reading open
	// that had to open the store for writing; Close calls it once the
	// store is closed.
	letGo func()
}

var _ checkpoint.Store = (*Store)(nil)

// Open opens the store in dir, creating it when dir is missing or empty.
// It fails with checkpoint.ErrForeignStore when dir holds anything else,
// and with checkpoint.ErrLocked when another process has the store open
// (see Options.Reading and Options.WaitForReaders for readers).
func Open(dir string, opts Options) (*Store, error) {
	opts, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if opts.Reading {
		return openReader(dir, opts)
	}
	var (
		deadline time.Time
		release  = func() {}
	)
	defer func() { release() }()
	for {
		s, err := openWriting(dir, opts)
		if !errors.Is(err, checkpoint.ErrLocked) || opts.WaitForReaders <= 0 || !readersOnly(dir) && !readerWriting(dir) {
			return s, err
		}
		if deadline.IsZero() {
			// From now on, readers that come stand back (openReader).
			release = takeGate(dir)
			deadline = time.Now().Add(opts.WaitForReaders)
			if opts.OnWait != nil {
				opts.OnWait()
			}
		}
		if time.Now().After(deadline) {
			return nil, &lockedError{dir: dir, cause: fmt.Errorf("commands reading it held it for over %s", opts.WaitForReaders)}
		}
		time.Sleep(readerPoll)
	}
}

// readerPoll is how often an open for writing tries again while readers
// hold the store.
const readerPoll = 5 * time.Millisecond

// Readers and a writer of the store meet at two locks. Badger's own, a
// flock on the directory, is shared by read-only opens and exclusive
// for an open for writing: a writer that finds the store locked but can
// take the lock shared knows readers alone hold it, and waits for them.
// While it waits it holds writerFile's flock, and a reader that finds it
// held stands back (ErrLocked; the command then reaches the writer on
// its socket), so that readers one after another cannot keep it out.
const writerFile = "GAFFER-WRITER"

// readerFile's flock is held by a reading open that found the store in
// need of an open for writing (openReader) for as long as it has the
// store: the lock it holds is then exclusive, and a writer that finds it
// waits for it as for readers, not refused as by another writer (as
// when a reader comes in the moment a writer's close has let go of the
// store but not yet removed its closing marker).
const readerFile = "GAFFER-READER"

// readerWriting reports whether a reading open holds readerFile's flock:
// it has the store open for writing.
func readerWriting(dir string) bool {
	f, err := os.Open(filepath.Join(dir, readerFile))
	if err != nil {
		return false // never made: no reader has opened for writing
	}
	defer f.Close()
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// openWritingAsReader opens the store in dir for writing for a reading
// open (openReader), holding readerFile's flock while the store is open.
// It makes nothing: the file is made by every open for writing
// (openWriting), so that a reader of a store it must not change (a
// damaged one) changes nothing; a store without it (opened for writing
// by no gaffer that makes it) is opened as before.
func openWritingAsReader(dir string, opts Options) (*Store, error) {
	f, err := os.Open(filepath.Join(dir, readerFile))
	if err != nil {
		return openWriting(dir, opts) // a writer then finds it held, as before
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, &lockedError{dir: dir, cause: errors.New("another command reading it opened it for writing")}
	}
	s, err := openWriting(dir, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.letGo = func() { f.Close() }
	return s, nil
}

// readersOnly reports whether the store in dir is held by read-only
// opens alone: its directory's flock can be taken shared.
func readersOnly(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil
}

// takeGate takes writerFile's flock (creating the file), without
// waiting, and returns its release; when another writer holds it, or the
// file cannot be made, there is nothing to release.
func takeGate(dir string) (release func()) {
	f, err := os.OpenFile(filepath.Join(dir, writerFile), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}

// writerWaiting reports whether a writer holds writerFile's flock: it
// waits to open the store.
func writerWaiting(dir string) bool {
	f, err := os.Open(filepath.Join(dir, writerFile))
	if err != nil {
		return false // never made: no writer has waited
	}
	defer f.Close()
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// openReader opens the store in dir for reading (Options.Reading),
// read-only where it can; it stands back (ErrLocked) while a writer waits
// to open it.
func openReader(dir string, opts Options) (*Store, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return openWriting(dir, opts) // no store yet: as before
	}
	if writerWaiting(dir) {
		return nil, &lockedError{dir: dir, cause: errors.New("a writer is waiting to open it")}
	}
	s, err := openReadOnly(dir, opts)
	if errors.Is(err, errNeedsWriter) {
		if writerWaiting(dir) {
			return nil, &lockedError{dir: dir, cause: errors.New("a writer is waiting to open it")}
		}
		return openWritingAsReader(dir, opts)
	}
	return s, err
}

// errNeedsWriter is openReadOnly's answer for a store it cannot open
// read-only: one a killed process left to repair, or not yet marked.
var errNeedsWriter = errors.New("checkpoint: the store needs an open for writing")

// openReadOnly opens the store in dir with Badger read-only, sharing it
// with other readers, after openWriting's checks that read (its tables
// and owner); it writes nothing but, for tables not listed yet, the list
// of the tables it checked (verifiedFile). A store with memtable logs
// (a killed process's, which Badger replays by writing), a marker of an
// open or close cut short, or no format marker is errNeedsWriter.
func openReadOnly(dir string, opts Options) (*Store, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := checkOwner(dir); err != nil {
		return nil, err
	}
	unlock, err := lockDirShared(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) > 0 {
		return nil, errNeedsWriter
	}
	for _, m := range []string{openingFile, closingFile} {
		if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
			return nil, errNeedsWriter
		}
	}
	verified, judged, err := checkTables(dir)
	if err != nil {
		var full *checkpoint.NoSpaceError
		if errors.As(err, &full) {
			return nil, err
		}
		return nil, classifyOpenError(dir, err)
	}
	db, err := openBadgerDB(badgerOptions(dir, opts).WithReadOnly(true))
	if err != nil {
		return nil, classifyOpenError(dir, err)
	}
	s := &Store{db: db, dir: dir, opts: opts, readOnly: true,
		env: checkpoint.LeaseRules{Now: opts.Now, Alive: opts.ProcessAlive}.WithDefaults()}
	marker, empty, err := s.readMarker()
	if err == nil && marker == nil {
		err = errNeedsWriter // a store still to be marked, or damaged: the writer's open says which
	}
	if err == nil {
		err = s.judgeMarker(marker, empty, len(verified) > 0)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	if verified != nil && !judged {
		writeVerified(dir, verified)
	}
	return s, nil
}

// badgerOptions are Badger's options for the store in dir.
func badgerOptions(dir string, opts Options) badger.Options {
	bo := badger.DefaultOptions(dir).
		WithLogger(badgerLogger{opts.Logger}).
		WithMemTableSize(opts.MemTableSize).
		WithValueLogFileSize(valueLogFileSize).
		WithValueThreshold(valueThreshold).
		WithBlockCacheSize(4 << 20).
		WithBlockSize(blockSize).
		WithBaseTableSize(baseTableSize).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumCompactors(2).
		WithNumVersionsToKeep(1).
		WithCompression(options.ZSTD).
		WithCompactL0OnClose(true).
		WithMetricsEnabled(false).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithSyncWrites(opts.SyncWrites)
	if opts.Reading {
		bo = bo.WithNumCompactors(0).WithCompactL0OnClose(false)
	}
	return bo
}

// openWriting opens the store in dir for writing, creating it when dir
// is missing or empty (Open without waiting).
func openWriting(dir string, opts Options) (s *Store, err error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := checkOwner(dir); err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	// Badger writes as it opens (a new memtable log), through a memory map.
	err = checkSpace(dir, opts.minFree())
	var verified map[uint64]tableStamp
	judged := false
	if err == nil {
		verified, judged, err = checkTables(dir)
	}
	leftovers := leftoverLogs(dir)
	if err == nil {
		err = checkLogs(dir, leftovers)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err == nil {
		clearLeftovers(dir, leftovers)
		markLogs(dir, openingFile)
		defer func() {
			if err != nil { // a failed open leaves no marker behind
				unmark(dir, openingFile)
			}
		}()
	}
	unlock()
	var full *checkpoint.NoSpaceError
	if errors.As(err, &full) {
		return nil, err
	}
	if err != nil {
		return nil, classifyOpenError(dir, err)
	}
	bo := badgerOptions(dir, opts)
	if !judged {
		if err := checkReadOnly(dir, bo, len(tables) > 0); err != nil {
			return nil, err
		}
	}
	db, err := openBadgerDB(bo)
	for wait := 0; err != nil && !judged && isLockError(err) && wait < lockRetries; wait++ {
		// checkReadOnly's read-only Badger has just closed the file that
		// held its lock, without unlocking it: a child forked meanwhile
		// (see releaseLock) holds the lock until it execs, moments later.
		time.Sleep(lockRetryWait)
		db, err = openBadgerDB(bo)
	}
	if err != nil {
		return nil, classifyOpenError(dir, err)
	}
	unmark(dir, openingFile)
	s = &Store{db: db, dir: dir, opts: opts,
		env: checkpoint.LeaseRules{Now: opts.Now, Alive: opts.ProcessAlive}.WithDefaults()}
	if err := s.init(len(tables) > 0); err != nil {
		db.Close()
		return nil, err
	}
	if verified != nil && !judged {
		writeVerified(dir, verified)
	}
	// For the readers that must open the store for writing one day
	// (openWritingAsReader).
	if f, err := os.OpenFile(filepath.Join(dir, readerFile), os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	privateFiles(dir)
	return s, nil
}

// openBadgerDB opens Badger, turning a panic on a damaged directory into an
// error.
func openBadgerDB(bo badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, damagef("badger panicked: %v", r)
		}
	}()
	return badger.Open(bo)
}

// isLockError reports whether Badger's open failed for its directory lock.
func isLockError(err error) bool {
	return strings.Contains(err.Error(), "Cannot acquire directory lock")
}

// lockRetries and lockRetryWait bound how long openWriting waits for a
// lock its own read-only check left to a child about to exec: 200 ms
// before a store another process holds is reported as held.
const (
	lockRetries   = 10
	lockRetryWait = 20 * time.Millisecond
)

func classifyOpenError(dir string, err error) error {
	switch {
	case isLockError(err):
		return &lockedError{dir: dir, cause: err}
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("checkpoint: open store %s: %w", dir, err)
	case ioerr.Machine(err):
		// A full, failing or read-only disk is not damage to the store.
		return fmt.Errorf("checkpoint: open store %s: %w", dir, err)
	case flattenedErrno(err) != 0:
		// Badger flattened the cause into its message: a full, failing or
		// read-only disk, or a file this user may not open, is not damage.
		return fmt.Errorf("checkpoint: open store %s: %w", dir, &flatError{msg: oneLine(err.Error()), errno: flattenedErrno(err)})
	case errors.Is(err, checkpoint.ErrCorrupt):
		return &damagedError{dir: dir, cause: err}
	}
	return &damagedError{dir: dir, cause: damagef("%v", err)}
}

// flattenedErrnos are the errors Badger's messages may name as text.
var flattenedErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EROFS, syscall.EIO, syscall.EDQUOT, syscall.EACCES, syscall.EPERM}

// flattenedErrno returns the errno of flattenedErrnos whose text err's
// message holds, or 0.
func flattenedErrno(err error) syscall.Errno {
	for _, e := range flattenedErrnos {
		if strings.Contains(err.Error(), e.Error()) {
			return e
		}
	}
	return 0
}

// flatError is Badger's flattened message; it unwraps to the errno the
// message names.
type flatError struct {
	msg   string
	errno syscall.Errno
}

func (e *flatError) Error() string { return e.msg }
func (e *flatError) Unwrap() error { return e.errno }

// isBadgerFile reports whether name is one Badger (or the store, see
// openingFile) keeps in its directory.
func isBadgerFile(name string) bool {
	switch name {
	case "MANIFEST", "KEYREGISTRY", "LOCK", "DISCARD", "MANIFEST-REWRITE", "KEYREGISTRY-REWRITE", openingFile, closingFile,
		verifiedFile, verifiedFile + ".tmp", writerFile, readerFile:
		return true
	}
	for _, ext := range []string{".sst", ".vlog", ".mem"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// checkDir creates dir when missing and refuses a directory holding files
// that are not Badger's, so we never scatter files into the user's data.
func checkDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("checkpoint: create store %s: %w", dir, err)
		}
		return nil
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %s is a file, not a directory; give the store a directory of its own (a new one or a gaffer store)",
			checkpoint.ErrForeignStore, dir)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: open store %s: %w", dir, err)
	}
	for _, e := range entries {
		if !isBadgerFile(e.Name()) || e.IsDir() {
			return fmt.Errorf("%w: %s holds %s; use an empty or new directory for the checkpoint store",
				checkpoint.ErrForeignStore, dir, filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// init checks the format marker. A database with no keys at all and no
// table files before opening is a store whose creation was interrupted: it
// gets the marker now.
func (s *Store) init(hadTables bool) error {
	marker, empty, err := s.readMarker()
	if err != nil {
		return err
	}
	if err := s.judgeMarker(marker, empty, hadTables); err != nil {
		return err
	}
	if marker == nil {
		err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(markerKey, []byte(markerValue)) })
		if err == nil {
			err = s.db.Sync()
		}
		if err != nil {
			return fmt.Errorf("checkpoint: initialise store %s: %w", s.dir, err)
		}
		return nil
	}
	return nil
}

// readMarker returns the format marker, nil when there is none, and
// whether the database holds no key at all.
func (s *Store) readMarker() (marker []byte, empty bool, err error) {
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(markerKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			it := txn.NewIterator(badger.IteratorOptions{})
			defer it.Close()
			it.Rewind()
			empty = !it.Valid()
			return nil
		}
		if err != nil {
			return err
		}
		marker, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint: open store %s: %w", s.dir, err)
	}
	return marker, empty, nil
}

// judgeMarker refuses a database that is not a gaffer store of this
// format, and one whose table files hold no records. A database without
// keys is a new store (the marker is still to be written).
func (s *Store) judgeMarker(marker []byte, empty, hadTables bool) error {
	switch {
	case marker == nil && empty && hadTables:
		return &damagedError{dir: s.dir, cause: damagef("its table files hold no records")}
	case marker == nil && empty:
		return nil
	case marker == nil:
		return fmt.Errorf("%w: %s is a Badger database without a gaffer marker; use an empty or new directory for the checkpoint store",
			checkpoint.ErrForeignStore, s.dir)
	case string(marker) != markerValue:
		return fmt.Errorf("%w: %s has format %q, this build reads %q", checkpoint.ErrForeignStore, s.dir, marker, markerValue)
	}
	return nil
}

// checkReadOnly opens an existing store read-only and makes init's
// checks, so that a directory init would refuse is refused before Badger
// opens it for writing, which writes a new memtable log and compacts the
// tables: an open that fails changes nothing. Badger cannot open read-only
// a store with memtable logs (a killed process left them); for those the
// checks wait for init, after checkLogs made sure Badger's replay loses
// nothing.
func checkReadOnly(dir string, bo badger.Options, hadTables bool) error {
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return nil // a new store
	}
	if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) > 0 {
		return nil
	}
	db, err := openBadgerDB(bo.WithReadOnly(true))
	if err != nil {
		if isLockError(err) {
			return &lockedError{dir: dir, cause: err}
		}
		return nil // the real open says what is wrong
	}
	defer db.Close()
	s := &Store{db: db, dir: dir}
	marker, empty, err := s.readMarker()
	if err != nil {
		return err
	}
	return s.judgeMarker(marker, empty, hadTables)
}

// loadStamp makes activity stamps continue after the newest one on disk,
// once: on the first Put, not at Open, so that a command that only reads
// does not read every run's index for it.
func (s *Store) loadStamp() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stamped {
		return nil
	}
	var newest int64
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{kindIndex}, PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			runID, _ := runOfKey(it.Item().Key())
			err := it.Item().Value(func(v []byte) error {
				// A damaged index is reported when its run is used.
				if x, err := decodeIndex(runID, v); err == nil {
					newest = max(newest, x.stamp)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.stamp, s.stamped = max(s.stamp, newest), true
	return nil
}

func (s *Store) nextStamp() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stamp = max(s.stamp+1, s.env.Now().UnixNano())
	return s.stamp
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close flushes and closes the database. Later calls fail with ErrClosed.
//
// Closing flushes the memtable into a table file that Badger writes through
// a memory map, which on a full disk is a SIGBUS, not an error. So while
// the file system has less than minFree bytes free, Close leaves the
// database open and returns a *NoSpaceError: every write it acknowledged
// is in its logs, which the next open replays, as after a killed process.
// Call Close again once there is room; the process may also just exit.
//
// A store whose directory was deleted while it was open (the repository
// removed under a run) is not closed: Badger would retry flushing its
// memtable there for ever. Close returns at once, or as soon as it sees
// the directory go, an error matching checkpoint.ErrDeleted.
func (s *Store) Close() error {
	if s.db.IsClosed() {
		return nil
	}
	if s.letGo != nil {
		defer func() {
			if s.db.IsClosed() {
				s.letGo()
				s.letGo = nil
			}
		}()
	}
	if s.readOnly {
		// Nothing to flush or compact, no log to mark: Badger only lets go.
		if err := s.db.Close(); err != nil {
			return fmt.Errorf("checkpoint: close store %s: %w", s.dir, err)
		}
		return nil
	}
	if err := s.deleted(); err != nil {
		return err
	}
	if err := s.roomToWrite(); err != nil {
		return fmt.Errorf("checkpoint: close store %s: %w", s.dir, err)
	}
	markLogs(s.dir, closingFile)
	done := make(chan error, 1)
	go func() { done <- s.db.Close() }()
	tick := time.NewTicker(closePoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("checkpoint: close store %s: %w", s.dir, err)
			}
			unmark(s.dir, closingFile)
			privateFiles(s.dir)
			return nil
		case <-tick.C:
			if err := s.deleted(); err != nil {
				return err
			}
		}
	}
}

// closePoll is how often Close looks whether the store's directory is
// still there while Badger closes.
const closePoll = 250 * time.Millisecond

// deleted returns an error matching checkpoint.ErrDeleted when the
// store's directory, or its manifest, is gone.
func (s *Store) deleted() error {
	if _, err := os.Stat(filepath.Join(s.dir, "MANIFEST")); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s is gone, and the runs and checkpoints it held with it", checkpoint.ErrDeleted, s.dir)
	}
	return nil
}

// maxRetries bounds how often a transaction is retried after a Badger
// conflict; each retry re-reads, so the outcome is decided by the store.
const maxRetries = 50

// update runs fn in a read-write transaction, retrying Badger conflicts.
func (s *Store) update(ctx context.Context, fn func(txn *badger.Txn) error) error {
	if s.readOnly {
		return fmt.Errorf("checkpoint: store %s: %w", s.dir, ErrReadOnly)
	}
	if err := s.roomToWrite(); err != nil {
		return err
	}
	for attempt := range maxRetries {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.guard(func() error { return s.db.Update(fn) })
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		if err := conflictBackoff(ctx, attempt); err != nil {
			return err
		}
	}
	return fmt.Errorf("checkpoint: %d transaction conflicts in a row: %w", maxRetries, checkpoint.ErrConflict)
}

// roomToWrite refuses a write, with a *NoSpaceError, while the store's
// file system has less than minFree bytes free (see minFree).
func (s *Store) roomToWrite() error {
	return checkSpace(s.dir, s.opts.minFree())
}

func (s *Store) view(fn func(txn *badger.Txn) error) error {
	return s.guard(func() error { return s.db.View(fn) })
}

// guard maps a closed database to ErrClosed, a Badger panic (which a
// damaged file can cause) to an error, and a corrupt record to an error
// naming the store and the fix (it still matches ErrCorrupt and unwraps
// to the *CorruptError).
func (s *Store) guard(fn func() error) (err error) {
	if s.db.IsClosed() {
		return checkpoint.ErrClosed
	}
	defer func() {
		if r := recover(); r != nil {
			err = &damagedError{dir: s.dir, cause: damagef("badger panicked: %v", r)}
		}
	}()
	err = fn()
	if errors.Is(err, badger.ErrDBClosed) {
		return checkpoint.ErrClosed
	}
	var d *damagedError
	if errors.Is(err, checkpoint.ErrCorrupt) && !errors.As(err, &d) {
		// A record that cannot be decoded: say which store and what to do.
		return &damagedError{dir: s.dir, cause: err}
	}
	return err
}

// badgerLogger routes Badger's log lines to a slog.Logger, or drops them.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) log(level slog.Level, format string, args ...any) {
	if b.l == nil {
		return
	}
	b.l.Log(context.Background(), level, strings.TrimSpace(fmt.Sprintf(format, args...)), "component", "badger")
}

func (b badgerLogger) Errorf(f string, a ...any)   { b.log(slog.LevelError, f, a...) }
func (b badgerLogger) Warningf(f string, a ...any) { b.log(slog.LevelWarn, f, a...) }
func (b badgerLogger) Infof(f string, a ...any)    { b.log(slog.LevelInfo, f, a...) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.log(slog.LevelDebug, f, a...) }
