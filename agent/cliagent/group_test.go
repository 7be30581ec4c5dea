package cliagent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// TestCLIRecordsGroupFirst is the same for a CLI agent's session: its
// group is recorded before it began (the background child it starts,
// seen from outside, is in that group), then forgotten.
func TestCLIRecordsGroupFirst(t *testing.T) {
	dir := t.TempDir()
	rec := &testkit.Recorder{Marker: filepath.Join(dir, "started")}
	marker := strconv.Itoa(3000 + os.Getpid()%1000)
	d, err := NewDriver(Options{Template: Template{Command: []string{"sh", "-c",
		"touch started; sleep " + marker + " & while [ ! -e go ]; do sleep 0.01; done"}}, Groups: rec})
	if err != nil {
		t.Fatal(err)
	}
	pgrp := make(chan int, 1)
	go func() {
		defer close(pgrp)
		for range 1000 {
			if pid := testkit.FindProcess("sleep\x00" + marker + "\x00"); pid > 0 {
				pgrp <- testkit.Pgrp(pid)
				_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "p"})
	if err != nil || rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v %+v", err, rep)
	}
	pgid := <-pgrp
	pgids, early, forgot := rec.Groups()
	if len(pgids) != 1 || pgids[0] != pgid || len(early) != 0 || len(forgot) != 1 {
		t.Errorf("recorded %v (early %v, forgot %v), want the session's group %d recorded before it began, then forgotten",
			pgids, early, forgot, pgid)
	}
}
