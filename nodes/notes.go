package nodes

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/gaffer-dev/gaffer/state"
)

// A walk of a large work tree (git status) costs what the phase's own
// commit costs. The nodes that follow each other at once in one process
// need not walk it again to learn what the one before just learnt: the
// tree is clean after the phase's commit, or after preparePhase looked;
// it holds what recordWritten (or combine) recorded. Such a node leaves
// a note of it here, which the next node takes (once) instead of walking
// the tree, when it is about the same phase, attempt and HEAD. A node run
// in another process, or after anything else ran, finds no note and
// walks the tree as before; nothing checkpointed depends on a note.

// noteKind says what a treeNote vouches for.
type noteKind int

const (
	// noteClean: the tree had no changes outside the phase's keep list
	// (its user's untracked files and the execution directory) at head.
	noteClean noteKind = iota + 1
	// noteWritten: the tree's changes were exactly the phase's Written.
	noteWritten
)

// treeNote is what this process last verified of a run's tree.
type treeNote struct {
	kind      noteKind
	phase     int // the phase's index
	attempt   int
	iteration int // the review iteration it was made in (noteWritten)
	head      string
	untracked []string // the user's untracked files (noteClean after a commit)
}

// note records what this process just verified of run s's tree.
func (w *workflow) note(s state.ExecutionState, n treeNote) { w.notes.Store(s.Run.ID, n) }

// forget drops run s's note: its tree is no longer as noted.
func (w *workflow) forget(s state.ExecutionState) { w.notes.Delete(s.Run.ID) }

// take returns run s's note, once, when it is of kind about phase ps at
// its attempt and iteration with HEAD at head.
func (w *workflow) take(s state.ExecutionState, kind noteKind, ps state.PhaseState, head string) (treeNote, bool) {
	v, ok := w.notes.LoadAndDelete(s.Run.ID)
	if !ok {
		return treeNote{}, false
	}
	n := v.(treeNote)
	if n.kind != kind || n.phase != ps.Index || n.head != head || (kind == noteWritten && (n.attempt != ps.Attempt || n.iteration != ps.ReviewIteration())) {
		return treeNote{}, false
	}
	return n, true
}

// stillThere returns the paths of paths (slash, relative to root) that
// exist, in order.
func stillThere(root string, paths []string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		return err != nil
	})
}
