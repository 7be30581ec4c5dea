package profile

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/workspace"
)

// checkTree refuses a work tree with uncommitted changes (for a run in
// place, unless o.AllowDirty: a run in its own work tree leaves the
// user's changes alone) and a repository without a commit to start from. It returns
// the run's own inputs that are untracked in the tree (the plan, the script,
// gaffer.yaml): they are not the user's changes; and the tracked files
// with uncommitted changes (host.Uncommitted).
func checkTree(ctx context.Context, repo *workspace.Repo, o request) (inputs, uncommitted []string, err error) {
	st, err := repo.Status(ctx)
	if err != nil {
		return nil, nil, errorf(host.Refused, "read the work tree's status: %w", err)
	}
	inputs = runInputs(repo.Root(), st.Untracked, o.PlanFile, o.Script, filepath.Join(repo.Root(), config.RepoFile))
	if o.InPlace && !o.AllowDirty {
		if paths := host.DirtPaths(st, inputs); len(paths) > 0 {
			return nil, nil, errorf(host.Refused, "%w (%s: %s) in %s; commit or stash them, or pass --allow-dirty",
				host.ErrDirtyTree, render.Plural(len(paths), "path"), render.ListPaths(paths, 10), repo.Root())
		}
	}
	if err := checkHead(ctx, repo); err != nil {
		return nil, nil, err
	}
	return inputs, host.Uncommitted(st), nil
}

// checkHead refuses a repository without a commit to start from.
func checkHead(ctx context.Context, repo *workspace.Repo) error {
	if _, err := repo.Head(ctx); err != nil {
		return errorf(host.Refused, "the repository has no commit to start from: %w; make one first", err)
	}
	return nil
}

// runInputs returns the files among files (paths as given) that the run
// itself reads and that are untracked in the work tree at root: they are
// not the user's changes (see state.RunConfig.Inputs). untracked is the
// work tree's untracked files, relative to root.
func runInputs(root string, untracked []string, files ...string) []string {
	isUntracked := make(map[string]bool, len(untracked))
	for _, p := range untracked {
		isUntracked[p] = true
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	var out []string
	for _, f := range files {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		rel, err := filepath.Rel(realRoot, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		rel = filepath.ToSlash(rel)
		if isUntracked[rel] && !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}
