package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// outsideDir makes a directory outside the repository and outside the
// temporary directory (which commands may write to): under the package's
// own directory.
func outsideDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(wd, ".outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestToolboxRunCannotWriteOutside runs commands that write outside the
// repository: with Landlock they fail and nothing appears there, while the
// repository and the command's TMPDIR stay writable.
func TestToolboxRunCannotWriteOutside(t *testing.T) {
	if r, why := landlockAvailable(); r == nil {
		t.Skip(why)
	}
	var warned []string
	tb, dir := newTestToolbox(t, ToolboxOptions{Warn: func(m string) { warned = append(warned, m) }})
	out := outsideDir(t)
	target := filepath.Join(out, "file")
	res, err := tb.Run(context.Background(), "echo x > "+target+"; echo $? > status; echo in > inside.txt; echo t > \"$TMPDIR/t\" && echo tmp-ok", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command wrote %s outside the repository (stat: %v)\n%s", target, err, res.Output)
	}
	if s := strings.TrimSpace(readFile(t, filepath.Join(dir, "status"))); s == "0" {
		t.Errorf("writing outside succeeded (status %s)", s)
	}
	if readFile(t, filepath.Join(dir, "inside.txt")) != "in\n" || !strings.Contains(res.Output, "tmp-ok") {
		t.Errorf("the repository or TMPDIR was not writable:\n%s", res.Output)
	}
	res, err = tb.Run(context.Background(), "mkdir "+filepath.Join(out, "d")+" || rm -rf "+out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the command removed %s: %v\n%s", out, err, res.Output)
	}
	if len(warned) != 0 {
		t.Errorf("warned with Landlock available: %q", warned)
	}
}

// TestToolboxRunUnconfinedWhenOff shows the test above can fail: with
// confinement off, the same write lands.
func TestToolboxRunUnconfinedWhenOff(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{Confine: ConfineOff})
	target := filepath.Join(outsideDir(t), "file")
	if _, err := tb.Run(context.Background(), "echo x > "+target, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("with confinement off the write did not land: %v", err)
	}
}

// recorder is a GroupRecorder that checks, when asked to record, that the
// command has not started its work yet.
type recorder struct {
	t      *testing.T
	marker string // the file the command makes first
	mu     sync.Mutex
	pgids  []int
	early  []int // groups whose command had already begun
	forgot []int
}

func (r *recorder) Record(pgid int) (func(), error) {
	time.Sleep(50 * time.Millisecond) // give an ungated command time to begin
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pgids = append(r.pgids, pgid)
	if _, err := os.Stat(r.marker); err == nil {
		r.early = append(r.early, pgid)
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.forgot = append(r.forgot, pgid)
	}, nil
}

// TestToolboxRunRecordsGroupFirst checks that a command's process group is
// recorded before the command does anything, that the group is the
// command's, and that what the command left in the background dies with it.
func TestToolboxRunRecordsGroupFirst(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{t: t, marker: filepath.Join(dir, "started")}
	tb, err := NewToolbox(dir, ToolboxOptions{Groups: rec})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tb.Run(context.Background(), "touch started; sleep 300 & echo $! > bg; ps -o pgid= -p $$", nil)
	if err != nil || res.Failed() {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(res.Output))
	if len(rec.pgids) != 1 || rec.pgids[0] != pgid {
		t.Fatalf("recorded %v, want the command's group %d", rec.pgids, pgid)
	}
	if len(rec.early) != 0 {
		t.Errorf("the command began before its group was recorded")
	}
	if len(rec.forgot) != 1 {
		t.Errorf("the record was not forgotten after the command")
	}
	bg, _ := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "bg"))))
	if !gone(bg) {
		t.Errorf("the background process %d outlived its command", bg)
	}
}

// TestCLIRecordsGroupFirst is the same for a CLI agent's session.
func TestCLIRecordsGroupFirst(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{t: t, marker: filepath.Join(dir, "started")}
	d, err := NewCLIDriver(CLIOptions{Template: CLITemplate{Command: []string{"sh", "-c", "touch started; ps -o pgid= -p $$"}}, Groups: rec})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Run(context.Background(), Session{Role: RoleDeveloper, Dir: dir, Prompt: "p"})
	if err != nil || rep.Status != StatusCompleted {
		t.Fatalf("run: %v %+v", err, rep)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(rep.Output))
	if len(rec.pgids) != 1 || rec.pgids[0] != pgid || len(rec.early) != 0 || len(rec.forgot) != 1 {
		t.Errorf("recorded %v (early %v, forgot %v), want the session's group %d recorded before it began, then forgotten",
			rec.pgids, rec.early, rec.forgot, pgid)
	}
}

// gone waits (up to five seconds) for process pid to be gone or a zombie.
func gone(pid int) bool {
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return true
		}
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// fileRecorder records a group as a file in dir, as internal/procgroup does
// beside the store.
type fileRecorder struct{ dir string }

func (f fileRecorder) Record(pgid int) (func(), error) {
	path := filepath.Join(f.dir, strconv.Itoa(pgid))
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

// TestConfinedCommandRecordsOutsideTheRepository runs a confined command
// whose group records live outside the repository (a --store elsewhere):
// the record is gaffer's write, not the command's, so Landlock must not stop
// it, and the record is removed after the command.
func TestConfinedCommandRecordsOutsideTheRepository(t *testing.T) {
	if r, why := landlockAvailable(); r == nil {
		t.Skip(why)
	}
	records := outsideDir(t)
	tb, _ := newTestToolbox(t, ToolboxOptions{Groups: fileRecorder{records}})
	res, err := tb.Run(context.Background(), "echo ok", nil)
	if err != nil || res.Failed() {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	left, _ := os.ReadDir(records)
	if len(left) != 0 {
		t.Errorf("records left after the command: %d", len(left))
	}
}
