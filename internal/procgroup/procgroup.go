package procgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// Registry is the directory that records the live process groups of a
// store's agents. It is safe for concurrent use.
type Registry struct {
	dir string
}

// Open returns the registry in dir. The directory is made, with mode
// 0700, by the first Record.
func Open(dir string) *Registry {
	return &Registry{dir: dir}
}

// Dir returns the registry's directory.
func (r *Registry) Dir() string { return r.dir }

// record is one recorded group.
type record struct {
	pgid  int
	start uint64 // the leader's start time, clock ticks since boot
	boot  string
}

func (rec record) String() string {
	return fmt.Sprintf("%d %d %s\n", rec.pgid, rec.start, rec.boot)
}

func parseRecord(b []byte) (record, error) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return record{}, fmt.Errorf("procgroup: bad record %q", b)
	}
	pgid, err := strconv.Atoi(f[0])
	if err != nil || pgid <= 1 {
		return record{}, fmt.Errorf("procgroup: bad record %q", b)
	}
	start, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return record{}, fmt.Errorf("procgroup: bad record %q", b)
	}
	return record{pgid: pgid, start: start, boot: f[2]}, nil
}

// Record durably notes that process group pgid, whose leader (process
// pgid) is alive, belongs to this process: the record is fsynced, and so
// is the directory, before Record returns. The returned function removes
// the record; call it once the group is dead.
func (r *Registry) Record(pgid int) (forget func(), err error) {
	start, err := startTime(pgid)
	if err != nil {
		return nil, fmt.Errorf("procgroup: group %d: %w", pgid, err)
	}
	if start == 0 {
		return func() {}, nil // no /proc: nothing to record
	}
	boot, err := bootID()
	if err != nil {
		return nil, fmt.Errorf("procgroup: %w", err)
	}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return nil, fmt.Errorf("procgroup: %w", err)
	}
	if info, err := os.Lstat(r.dir); err != nil {
		return nil, fmt.Errorf("procgroup: %w", err)
	} else if !info.IsDir() {
		// A symbolic link: the chmod and the records would go to
		// whatever it points at, a directory of the user's.
		return nil, fmt.Errorf("procgroup: %s is not a directory of gaffer's own (a symbolic link?); remove it", r.dir)
	}
	if err := os.Chmod(r.dir, 0o700); err != nil {
		return nil, fmt.Errorf("procgroup: %w", err)
	}
	name := filepath.Join(r.dir, strconv.Itoa(pgid))
	if err := atomicfile.WriteFile(name, []byte(record{pgid: pgid, start: start, boot: boot}.String()), 0o600); err != nil {
		return nil, fmt.Errorf("procgroup: record group %d: %w", pgid, err)
	}
	return func() { _ = os.Remove(name) }, nil
}

// KillOrphans kills, with SIGKILL, every recorded group that is still
// alive and ours (see the package doc), waits for its processes to die
// and removes the records. It returns the ids of the groups it killed.
// Call it only while holding the store.
func (r *Registry) KillOrphans() ([]int, error) {
	entries, err := os.ReadDir(r.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("procgroup: %w", err)
	}
	boot, err := bootID()
	if err != nil {
		return nil, fmt.Errorf("procgroup: %w", err)
	}
	var killed []int
	var errs []error
	for _, e := range entries {
		if !isRecordName(e.Name()) || !e.Type().IsRegular() {
			continue // not ours: leave what the directory holds besides records
		}
		name := filepath.Join(r.dir, e.Name())
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rec, err := parseRecord(b)
		if err == nil && rec.boot == boot {
			ok, err := killGroup(rec)
			if err != nil {
				errs = append(errs, fmt.Errorf("procgroup: kill group %d: %w", rec.pgid, err))
				continue
			}
			if ok {
				killed = append(killed, rec.pgid)
			}
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return killed, errors.Join(errs...)
}

// isRecordName reports whether name is a record's (a group id) or its
// temporary file's: atomicfile's (".ID.gaffer-tmp-RANDOM"), or "ID.tmp",
// which versions before atomicfile wrote. A temporary file synced but not
// yet renamed by a killed process holds a whole record, of a group that
// may be alive.
func isRecordName(name string) bool {
	if target, ok := atomicfile.TempTarget(name); ok {
		name = target
	} else {
		name = strings.TrimSuffix(name, ".tmp")
	}
	id, err := strconv.Atoi(name)
	return err == nil && id > 0 && strconv.Itoa(id) == name
}
