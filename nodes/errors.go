package nodes

import (
	"errors"
	"fmt"
)

// Errors returned by the package. Test for them with errors.Is.
var (
	// ErrInvalidConfig is returned by Build for a Config it cannot use.
	ErrInvalidConfig = errors.New("nodes: invalid config")
	// ErrNoDriver is returned when the driver factory has no driver for a
	// role the workflow needs.
	ErrNoDriver = errors.New("nodes: no driver for role")
	// ErrBadAnswer is returned by the approval node for a resume value that
	// is not an Answer.
	ErrBadAnswer = errors.New("nodes: bad approval answer")
	// ErrNoPhase is returned when the state names a phase the plan does not
	// have: a state that was not built by these nodes.
	ErrNoPhase = errors.New("nodes: no current phase")
)

// ErrHeadMoved is matched (errors.Is) by a *HeadMovedError: a reset to a
// phase's pre-phase commit was refused because HEAD is somewhere the run
// did not put it, and the reset would drop commits that are not the
// run's own. Nothing was changed; the run can be resumed once the branch
// is back at the pre-phase commit.
var ErrHeadMoved = errors.New("nodes: HEAD moved since the phase began")

// HeadMovedError is the refusal to reset a phase whose branch moved: HEAD
// is at Head, which is not PreCommit and not PreCommit plus only this
// run's own commits (a user's commit, a checkout of another branch, a
// fork of an older checkpoint).
type HeadMovedError struct {
	Phase     int    // 1-based
	Head      string // where HEAD is
	PreCommit string // where the phase started
}

func (e *HeadMovedError) Error() string {
	return fmt.Sprintf("HEAD moved since phase %d began: it is at %s, the phase started at %s; "+
		"move the branch back (git reset --keep %s, after saving your commits) or start a new run",
		e.Phase, short(e.Head), short(e.PreCommit), short(e.PreCommit))
}

// Is makes errors.Is(err, ErrHeadMoved) true.
func (e *HeadMovedError) Is(target error) bool { return target == ErrHeadMoved }

// RemoteMovedError is the refusal to go on with a run whose branch on the
// shared remote (Config.Publish) is not where its checkpoint left it: at
// Tip, which is neither Expected (the commit the checkpoint records) nor
// Expected plus only this run's own commits. Another host, or a person,
// moved it; the run's attempt stops and nothing is pushed over it. It
// matches ErrHeadMoved: the run stops as for a HEAD that moved.
type RemoteMovedError struct {
	Branch   string // the run's branch, gaffer/<run-id>
	Tip      string // where the branch is on the remote ("" when it has none)
	Expected string // where the run's checkpoint left it
}

func (e *RemoteMovedError) Error() string {
	tip := short(e.Tip)
	if tip == "" {
		tip = "nowhere (the remote has no such branch)"
	}
	return fmt.Sprintf("branch %s on the remote is at %s, not at %s where the run's checkpoint left it (another host or a person moved it); "+
		"move it back (git push --force-with-lease origin %s:refs/heads/%s, after saving its commits) or start a new run",
		e.Branch, tip, short(e.Expected), short(e.Expected), e.Branch)
}

// Is makes errors.Is(err, ErrHeadMoved) true.
func (e *RemoteMovedError) Is(target error) bool { return target == ErrHeadMoved }
