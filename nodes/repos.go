package nodes

import (
	"fmt"
	"sync"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// maxOpenRepos bounds Repos' cache: the work trees of the runs one
// process drives at once are few, and a finished run's tree is gone.
const maxOpenRepos = 64

// Repos finds the repository a run works in: its own work tree
// (state.RunInfo.WorkTree) opened once and kept, or the user's checkout
// for a run in place. It is safe for concurrent use.
type Repos struct {
	def  *workspace.Repo
	mu   sync.Mutex
	open map[string]*workspace.Repo
}

// NewRepos returns the Repos whose in-place runs work in def.
func NewRepos(def *workspace.Repo) *Repos {
	return &Repos{def: def, open: map[string]*workspace.Repo{}}
}

// For is the repository of run s.
func (r *Repos) For(s state.ExecutionState) (*workspace.Repo, error) {
	return r.At(s.Run.WorkTree)
}

// At is the repository of the work tree at dir; the user's checkout for "".
func (r *Repos) At(dir string) (*workspace.Repo, error) {
	if dir == "" {
		return r.def, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if repo, ok := r.open[dir]; ok {
		return repo, nil
	}
	open := workspace.Open
	if r.def != nil {
		open = r.def.OpenWorkTree // never through a .git an agent rewrote
	}
	repo, err := open(dir)
	if err != nil {
		return nil, fmt.Errorf("nodes: the run's work tree: %w", err)
	}
	if len(r.open) >= maxOpenRepos {
		clear(r.open)
	}
	r.open[dir] = repo
	return repo, nil
}

// Forget drops the work tree at dir from the cache (it was removed).
func (r *Repos) Forget(dir string) {
	r.mu.Lock()
	delete(r.open, dir)
	r.mu.Unlock()
}

// repo is the repository run s works in (Config.RepoFor, else Config.Repo).
func (w *workflow) repo(s state.ExecutionState) (*workspace.Repo, error) {
	if w.cfg.RepoFor != nil {
		return w.cfg.RepoFor(s)
	}
	return w.cfg.Repo, nil
}
