package badger

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Badger makes a log in two steps, an empty file and then its full size,
// and deletes a log in two, cutting it to nothing and then removing it: a
// memtable log once it is flushed to a table, a value log holding nothing
// but its header when the store opens. A process killed between the steps
// leaves an empty log: the same shape as a log a careless copy cut to
// nothing, which checkLogs refuses because it held records. Two markers
// tell them apart. Before Badger opens the store, openingFile lists the
// logs there with their sizes; an empty log it does not list was made by
// an open that never finished, and one it lists with no more than a
// header was being deleted by it: neither held anything. Before Badger
// closes the store, closingFile lists them; an empty memtable log it lists
// was flushed to a table and then cut by a close that never finished.
// Each marker goes when its step finishes. An empty log a memtable flush
// leaves while the store is in use is not told apart: that window is two
// system calls wide.
const (
	openingFile = "GAFFER-OPENING"
	closingFile = "GAFFER-CLOSING"
)

// markLogs writes the marker name listing the logs dir holds, a line
// "NAME SIZE" each. It is best effort: on a directory it cannot write,
// Badger makes and deletes no log.
func markLogs(dir, name string) {
	var b strings.Builder
	for _, path := range logPaths(dir) {
		if info, err := os.Stat(path); err == nil {
			fmt.Fprintf(&b, "%s %d\n", filepath.Base(path), info.Size())
		}
	}
	_ = os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600)
}

// unmark removes the marker name once its step has finished.
func unmark(dir, name string) {
	_ = os.Remove(filepath.Join(dir, name))
}

// readMarker returns the logs the marker name lists with their sizes,
// and whether it is there.
func readMarker(dir, name string) (map[string]int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, false
	}
	listed := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		n, size, _ := strings.Cut(line, " ")
		if n == "" {
			continue
		}
		v, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			v = -1 // unknown: never taken for a header alone
		}
		listed[n] = v
	}
	return listed, true
}

// leftoverLogs returns the paths of the empty logs in dir that an open or
// a close killed midway left, as described at openingFile.
func leftoverLogs(dir string) map[string]bool {
	opening, opened := readMarker(dir, openingFile)
	closing, closed := readMarker(dir, closingFile)
	out := map[string]bool{}
	for _, path := range logPaths(dir) {
		name := filepath.Base(path)
		if !isEmpty(path) {
			continue
		}
		size, listed := opening[name]
		made := opened && !listed
		cleared := opened && listed && size >= 0 && size <= logHeaderSize
		_, flushed := closing[name]
		flushed = flushed && closed && strings.HasSuffix(name, ".mem")
		if made || cleared || flushed {
			out[path] = true
		}
	}
	return out
}

// clearLeftovers removes the leftover logs (Badger refuses an empty
// memtable log) and the markers that explained them.
func clearLeftovers(dir string, leftovers map[string]bool) {
	for path := range leftovers {
		_ = os.Remove(path)
	}
	unmark(dir, closingFile)
}

// logPaths are dir's memtable and value logs, sorted.
func logPaths(dir string) []string {
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	out := append(mems, vlogs...)
	slices.Sort(out)
	return out
}

// isEmpty reports whether the file at path is zero bytes long.
func isEmpty(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Size() == 0
}
