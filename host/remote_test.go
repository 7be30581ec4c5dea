package host

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// TestCheckRemoteTip: the remote's tip of a run's branch is taken when it
// is the checkpoint's commit or that commit plus only the run's own
// commits, and refused as moved (ErrHeadMoved, naming the tip) otherwise.
func TestCheckRemoteTip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	commit := func(msg string) string {
		run("commit", "-q", "--allow-empty", "-m", msg)
		return run("rev-parse", "HEAD")
	}
	base := commit("base")
	own1 := commit("phase 1\n\nGaffer-Run: r-1\nGaffer-Phase: 1\nGaffer-Lease: 7")
	own2 := commit("record\n\nGaffer-Run: r-1\nGaffer-Record: final")
	foreign := commit("someone's")
	h := &Host{remote: workspace.NewMirror("", dir)}
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1"}}
	s.Progress.Phases = []state.PhaseState{{PreCommit: base}}
	for _, tip := range []string{base, own1, own2} {
		if err := h.checkRemoteTip(ctx, s, tip); err != nil {
			t.Errorf("tip %s: %v", tip[:7], err)
		}
	}
	for _, tip := range []string{foreign, ""} {
		err := h.checkRemoteTip(ctx, s, tip)
		var moved *nodes.RemoteMovedError
		if !errors.Is(err, nodes.ErrHeadMoved) || !errors.As(err, &moved) || moved.Tip != tip {
			t.Errorf("tip %q: %v, want a RemoteMovedError naming it", tip, err)
		}
	}
	// Another run's commits on top of the checkpoint's are foreign too.
	s.Run.ID = "r-2"
	if err := h.checkRemoteTip(ctx, s, own1); !errors.Is(err, nodes.ErrHeadMoved) {
		t.Errorf("another run's commit: %v, want ErrHeadMoved", err)
	}
	if strings.Contains((&nodes.RemoteMovedError{Branch: "gaffer/r-1", Tip: foreign, Expected: base}).Error(), "\n") {
		t.Error("the refusal is not one line")
	}
}
