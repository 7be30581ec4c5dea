package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// DiscardPhase undoes what the unfinished phase of a cancelled run s left
// in repo's work tree, as a halt does: the work tree goes back to the
// phase's pre-phase commit, keeping only the user's untracked files from
// before the phase (PhaseState.Untracked, which holds the run's inputs
// too) and, as always, ignored files. The execution directory's
// uncommitted files go with the phase, so the tree is clean at the last
// good commit and the next run starts there.
//
// It does nothing and returns "" when no phase was running, when the
// phase's own commit is at HEAD (the phase was approved and committed;
// only its checkpoint was lost) or when the tree already is at the
// pre-phase commit and clean. It refuses with a *HeadMovedError, changing
// nothing, when HEAD moved in a way the run did not. Otherwise it returns
// the pre-phase commit it reset to. The user's changes a --allow-dirty
// run put aside are restored afterwards, on top (restore_user_changes).
// What the reset discards is kept first (see rescue), and notice, when not
// nil, is told where. A phase of several lanes loses its lanes' work
// trees and refs too (their work is in their commits until git prunes
// them).
func DiscardPhase(ctx context.Context, repo *workspace.Repo, s state.ExecutionState, notice func(string)) (string, error) {
	ps, ok := current(s)
	if !ok || ps.Status != state.PhaseRunning || ps.PreCommit == "" {
		return "", nil
	}
	w := &workflow{cfg: Config{Repo: repo, Clock: time.Now, Logger: slog.New(slog.DiscardHandler)}}
	if err := w.cleanLanes(ctx, s, ps); err != nil { // the lanes' trees and refs: the phase is gone
		return "", err
	}
	if _, found, err := w.find(ctx, s, phaseTrailers(s, ps)); err != nil {
		return "", err
	} else if found {
		return "", nil
	}
	head, err := w.resettable(ctx, s, ps)
	if err != nil {
		return "", err
	}
	if head == ps.PreCommit {
		st, err := repo.Status(ctx)
		if err != nil {
			return "", fmt.Errorf("nodes: discard phase %d: %w", ps.Index+1, err)
		}
		if !dirty(st, ps.Untracked) {
			return "", nil
		}
	}
	ref, h, err := rescue(ctx, repo, time.Now(), true, s, ps, ps.Untracked)
	if err != nil {
		return "", err
	}
	keep := ps.Untracked
	if recoveryOn(s) {
		keep = append(slices.Clone(keep), recoveryDir(s)) // the decision records: CommitDecisions takes them
	}
	if err := w.gitOp(repo, func() error { return repo.ResetTo(ctx, ps.PreCommit, keep) }); err != nil {
		return "", fmt.Errorf("nodes: discard phase %d: reset to %s: %w", ps.Index+1, short(ps.PreCommit), err)
	}
	if h != "" && notice != nil {
		notice(RescueNotice(ps.Index+1, ref, h))
	}
	return ps.PreCommit, nil
}
