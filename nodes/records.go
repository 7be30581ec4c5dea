package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"time"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// recordsTrailers mark the commit of a run's last decision records.
func recordsTrailers(s state.ExecutionState) []workspace.Trailer {
	return []workspace.Trailer{{Key: TrailerRun, Value: s.Run.ID}, {Key: TrailerRecord, Value: "decisions"}}
}

// recoveryDir is where run s keeps its decision records.
func recoveryDir(s state.ExecutionState) string { return path.Join(s.Run.ExecDir, "recovery") }

// commitDecisions commits the decision records of run s that no commit
// holds yet, and nothing else: a halted, stopped or cancelled run ends
// with no phase commit to take them, and its own work tree goes with its
// end. It does nothing when every record is committed already (or the
// run has none). It returns the commit, "" when it made none.
func (w *workflow) commitDecisions(ctx context.Context, s state.ExecutionState) (string, error) {
	repo, err := w.repo(s)
	if err != nil {
		return "", err
	}
	st, err := repo.Status(ctx)
	if err != nil {
		return "", fmt.Errorf("nodes: commit the decision records: %w", err)
	}
	dir := recoveryDir(s)
	var others []string
	pending := false
	for _, l := range [][]string{st.Modified, st.Added, st.Deleted, st.Untracked} {
		for _, p := range l {
			if under(p, []string{dir}) {
				pending = true
			} else {
				others = append(others, p)
			}
		}
	}
	if !pending {
		return "", nil
	}
	h, err := w.commit(ctx, s, "gaffer: decision records of "+s.Run.Slug, recordsTrailers(s), others)
	if err != nil {
		return "", err
	}
	return h, nil
}

// CommitDecisions commits the decision records a cancelled run s left
// uncommitted in repo's work tree (see DiscardPhase, which keeps them),
// and nothing else; "" when there were none to commit.
func CommitDecisions(ctx context.Context, repo *workspace.Repo, s state.ExecutionState) (string, error) {
	if !recoveryOn(s) {
		return "", nil
	}
	w := &workflow{cfg: Config{Repo: repo, Clock: time.Now, Logger: slog.New(slog.DiscardHandler)}}
	return w.commitDecisions(ctx, s)
}
