package nodes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// ErrLostCheckpoints is matched (errors.Is) by a *LostCheckpointsError.
var ErrLostCheckpoints = errors.New("nodes: the store lost checkpoints of the run")

// LostCheckpointsError reports a run whose branch is ahead of its store:
// HEAD's history holds the run's commit of a phase that the run's latest
// checkpoint never started. A phase's pre-phase commit is checkpointed
// before its agent starts, so such a commit proves that checkpoints after
// the latest one existed and were lost (a damaged or deleted memtable log,
// a store restored from an older copy). Resuming would run those phases
// again from the older state.
type LostCheckpointsError struct {
	Run    string
	Phase  int    // 1-based: the earliest phase the store has not started
	Commit string // that phase's commit in HEAD's history
	Parent string // the commit before it
	// Branch is the run's branch when the history checked was that
	// branch's, not a checked-out HEAD's (a run whose work tree is gone).
	Branch string
}

func (e *LostCheckpointsError) Error() string {
	if e.Branch != "" {
		return fmt.Sprintf("run %s: the store lost checkpoints: phase %d's commit %s is in branch %s, but the run's latest checkpoint "+
			"has not started phase %d; restore the store from a copy that has them, or move the branch back "+
			"(git branch -f %s %s, after saving your commits) to run the phases again",
			e.Run, e.Phase, short(e.Commit), e.Branch, e.Phase, e.Branch, short(e.Parent))
	}
	return fmt.Sprintf("run %s: the store lost checkpoints: phase %d's commit %s is in the branch, but the run's latest checkpoint "+
		"has not started phase %d; restore the store from a copy that has them, or move the branch back "+
		"(git reset --keep %s, after saving your commits) to run the phases again",
		e.Run, e.Phase, short(e.Commit), e.Phase, short(e.Parent))
}

// Is makes errors.Is(err, ErrLostCheckpoints) true.
func (e *LostCheckpointsError) Is(target error) bool { return target == ErrLostCheckpoints }

// maxWitnessCommits bounds how far back CheckCommits looks for the run's
// commits when the state does not say where the run began.
const maxWitnessCommits = 1000

// CheckCommits returns a *LostCheckpointsError when HEAD's history holds a
// commit of run s (its Gaffer-Run and Gaffer-Phase trailers) for a phase s
// has not started (no pre-phase commit), and nil otherwise. It looks back
// to phase 1's pre-phase commit, or through maxWitnessCommits commits. A
// repository it cannot read is not its business: it returns nil, and the
// run's own nodes report it.
func CheckCommits(ctx context.Context, repo *workspace.Repo, s state.ExecutionState) error {
	return checkCommits(ctx, repo, "HEAD", "", s)
}

// CheckBranchCommits is CheckCommits on branch's history instead of
// HEAD's: the run's own branch, when its work tree is gone.
func CheckBranchCommits(ctx context.Context, repo *workspace.Repo, branch string, s state.ExecutionState) error {
	return checkCommits(ctx, repo, "refs/heads/"+branch, branch, s)
}

func checkCommits(ctx context.Context, repo *workspace.Repo, rev, branch string, s state.ExecutionState) error {
	started := func(phase int) bool {
		return phase >= 1 && phase <= len(s.Progress.Phases) && s.Progress.Phases[phase-1].PreCommit != ""
	}
	all := len(s.Progress.Phases) > 0
	for i := range s.Progress.Phases {
		all = all && started(i+1)
	}
	if all {
		return nil // no phase is left for a commit to prove lost
	}
	var start string
	if len(s.Progress.Phases) > 0 {
		start = s.Progress.Phases[0].PreCommit
	}
	var lost *LostCheckpointsError
	commits, err := repo.LogFrom(ctx, rev, maxWitnessCommits)
	if err != nil {
		return nil
	}
	for i, c := range commits {
		if start != "" && c.Hash == start {
			break
		}
		if value(c.Trailers, TrailerRun) != s.Run.ID {
			continue
		}
		phase, err := strconv.Atoi(value(c.Trailers, TrailerPhase))
		if err != nil || started(phase) {
			continue
		}
		if lost == nil || phase <= lost.Phase {
			lost = &LostCheckpointsError{Run: s.Run.ID, Phase: phase, Commit: c.Hash, Branch: branch}
			if i+1 < len(commits) {
				lost.Parent = commits[i+1].Hash
			}
		}
	}
	if lost == nil {
		return nil
	}
	if lost.Parent == "" {
		lost.Parent = lost.Commit + "~1"
	}
	return lost
}

// value returns the value of the trailer key (compared without regard to
// case), or "".
func value(trailers []workspace.Trailer, key string) string {
	for _, t := range trailers {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}
