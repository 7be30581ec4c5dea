package cliagent

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// TestCLIRecordsGroupFirst is the same for a CLI agent's session.
func TestCLIRecordsGroupFirst(t *testing.T) {
	dir := t.TempDir()
	rec := &testkit.Recorder{Marker: filepath.Join(dir, "started")}
	d, err := NewDriver(Options{Template: Template{Command: []string{"sh", "-c", "touch started; ps -o pgid= -p $$"}}, Groups: rec})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: dir, Prompt: "p"})
	if err != nil || rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v %+v", err, rep)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(rep.Output))
	pgids, early, forgot := rec.Groups()
	if len(pgids) != 1 || pgids[0] != pgid || len(early) != 0 || len(forgot) != 1 {
		t.Errorf("recorded %v (early %v, forgot %v), want the session's group %d recorded before it began, then forgotten",
			pgids, early, forgot, pgid)
	}
}
