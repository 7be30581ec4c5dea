package profile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// resume --pace replaces the run's stored pace for this process only: the
// script driver built with an override waits before its first action, the
// one built from the stored config (no pace) does not.
func TestDriverFactoryPaceOverride(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte("developer:\n  - phase: 1\n    actions:\n      - write: {path: a.txt, content: a}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := state.RunConfig{ScriptPath: script, Agents: state.Agents{Developer: state.AgentConfig{Driver: "script"}}}
	session := agent.Session{Role: agent.RoleDeveloper, RunID: "r", Phase: 1, Attempt: 1, Iteration: 1, Dir: dir}

	// The override is an hour: the session can only end by its context.
	hour := time.Hour
	d, err := driverFactory(io.Discard, &hour, agentOptions{})(agent.RoleDeveloper, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := d.Run(ctx, session); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with --pace 1h: Run = %v, want it to wait until the context ends", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("with --pace 1h the action ran before the pause: %v", err)
	}

	// Without an override the stored pace (none) applies and the session
	// completes under a context that never ends.
	d, err = driverFactory(io.Discard, nil, agentOptions{})(agent.RoleDeveloper, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Run(context.Background(), session)
	if err != nil || rep.Status != agent.StatusCompleted {
		t.Fatalf("stored pace: Run = %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatalf("stored pace: the action did not run: %v", err)
	}
}
