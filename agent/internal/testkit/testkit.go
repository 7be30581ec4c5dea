package testkit

import (
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// ReadFile returns the content of the file at path, failing t when it
// cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// GitRepo makes an empty git repository in a temp dir; t is skipped when
// git cannot make one.
func GitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Skipf("git init: %v: %s", err, out)
	}
	return dir
}

// Recorder is a process group recorder (agent.GroupRecorder) that checks,
// when asked to record, that the command has not started its work yet:
// that the file Marker, which the command makes first, does not exist.
type Recorder struct {
	Marker string // the file the command makes first
	mu     sync.Mutex
	pgids  []int
	early  []int // groups whose command had already begun
	forgot []int
}

// Record notes pgid, after giving an ungated command time to begin.
func (r *Recorder) Record(pgid int) (func(), error) {
	time.Sleep(50 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pgids = append(r.pgids, pgid)
	if _, err := os.Stat(r.Marker); err == nil {
		r.early = append(r.early, pgid)
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.forgot = append(r.forgot, pgid)
	}, nil
}

// Groups returns the groups recorded, those whose command had begun before
// they were, and those forgotten, each in order.
func (r *Recorder) Groups() (recorded, early, forgot []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.pgids...), append([]int(nil), r.early...), append([]int(nil), r.forgot...)
}

// OutsideDir makes a directory, named from pattern as os.MkdirTemp does,
// outside the repository and outside the temporary directory (which
// commands may write to): under the working directory, the package's own.
func OutsideDir(t testing.TB, pattern string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(wd, pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
