package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// TestToolboxRunCannotWriteOutside runs commands that write outside the
// repository: with Landlock they fail and nothing appears there, while the
// repository and the command's TMPDIR stay writable.
func TestToolboxRunCannotWriteOutside(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	var warned []string
	tb, dir := newTestToolbox(t, ToolboxOptions{Warn: func(m string) { warned = append(warned, m) }})
	out := testkit.OutsideDir(t, ".outside-")
	target := filepath.Join(out, "file")
	res, err := tb.Run(context.Background(), "echo x > "+target+"; echo $? > status; echo in > inside.txt; echo t > \"$TMPDIR/t\" && echo tmp-ok", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command wrote %s outside the repository (stat: %v)\n%s", target, err, res.Output)
	}
	if s := strings.TrimSpace(testkit.ReadFile(t, filepath.Join(dir, "status"))); s == "0" {
		t.Errorf("writing outside succeeded (status %s)", s)
	}
	if testkit.ReadFile(t, filepath.Join(dir, "inside.txt")) != "in\n" || !strings.Contains(res.Output, "tmp-ok") {
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
	target := filepath.Join(testkit.OutsideDir(t, ".outside-"), "file")
	if _, err := tb.Run(context.Background(), "echo x > "+target, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("with confinement off the write did not land: %v", err)
	}
}

// TestToolboxRunRecordsGroupFirst checks that a command's process group is
// recorded before the command does anything, that the group is the
// command's (its background child, seen from outside, is in the group
// recorded), and that what the command left in the background dies with it.
func TestToolboxRunRecordsGroupFirst(t *testing.T) {
	dir := t.TempDir()
	rec := &testkit.Recorder{Marker: filepath.Join(dir, "started")}
	tb, err := NewToolbox(dir, ToolboxOptions{Groups: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	marker := strconv.Itoa(3000 + os.Getpid()%1000)
	type seen struct{ pid, pgrp int }
	found := make(chan seen, 1)
	go func() {
		defer close(found)
		for range 1000 {
			if pid := testkit.FindProcess("sleep\x00" + marker + "\x00"); pid > 0 {
				found <- seen{pid, testkit.Pgrp(pid)}
				_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := tb.Run(context.Background(), "touch started; sleep "+marker+" & while [ ! -e go ]; do sleep 0.01; done", nil)
	if err != nil || res.Failed() {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	bg, ok := <-found
	if !ok {
		t.Fatal("the command's background process was never seen")
	}
	pgids, early, forgot := rec.Groups()
	if len(pgids) != 1 || pgids[0] != bg.pgrp {
		t.Fatalf("recorded %v, want the command's group %d (its background child's)", pgids, bg.pgrp)
	}
	if len(early) != 0 {
		t.Errorf("the command began before its group was recorded")
	}
	if len(forgot) != 1 {
		t.Errorf("the record was not forgotten after the command")
	}
	if !testkit.Gone(bg.pid) {
		t.Errorf("the background process %d outlived its command", bg.pid)
	}
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
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	records := testkit.OutsideDir(t, ".outside-")
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
