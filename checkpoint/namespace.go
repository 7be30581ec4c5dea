package checkpoint

import (
	"context"
	"fmt"
	"strings"
)

// NamespaceSep separates a run id from the namespace of a run nested in it
// (a graph's subgraph run): the child of run "r" in namespace "node:2:0" is
// the run "r|node:2:0", and so on at any depth. A nested run is a run like
// any other for a Store — its own checkpoints, pending writes, lease and
// fencing token — so every store keeps namespaces apart with no change;
// ChildRuns and DeleteTree read and remove a run with its nested runs.
const NamespaceSep = "|"

// ChildRunID is the id of the run nested in runID under namespace segment ns.
func ChildRunID(runID, ns string) string { return runID + NamespaceSep + ns }

// ChildRuns lists the runs nested in runID at every depth, in the order
// s.Runs lists runs (newest activity first).
func ChildRuns(ctx context.Context, s Store, runID string) ([]RunInfo, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("child runs of %s: %w", runID, err)
	}
	var out []RunInfo
	for _, ri := range runs {
		if strings.HasPrefix(ri.RunID, runID+NamespaceSep) {
			out = append(out, ri)
		}
	}
	return out, nil
}

// DeleteTree deletes runID and every run nested in it.
func DeleteTree(ctx context.Context, s Store, runID string) error {
	kids, err := ChildRuns(ctx, s, runID)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := s.Delete(ctx, k.RunID); err != nil {
			return fmt.Errorf("delete %s: %w", k.RunID, err)
		}
	}
	return s.Delete(ctx, runID)
}
