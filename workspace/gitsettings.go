package workspace

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// GitSettings returns the git blob hash of each file of the repository's
// git directory with which git can be made to run a program: the
// configuration (config, and a linked work tree's config.worktree), every
// hook (hooks/NAME, except git's *.sample files), and a linked work
// tree's .git file (DotGitKey), which names the git directory git reads. Keys are those
// names, prefixed "worktree/" for the linked work tree's own git
// directory; a missing config maps to "". Each version is also written to
// the object store, so that it can be got back (`git cat-file -p HASH`)
// after the file changed. An agent that changes one of them can get git,
// run by the user or by another program, to run its code unconfined.
func (r *Repo) GitSettings(ctx context.Context) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{GitDirKey: r.commonDir}
	add := func(key, path string, missingOK bool) error {
		data, err := os.ReadFile(path)
		if isNotExist(err) {
			if !missingOK {
				out[key] = ""
			}
			return nil
		}
		if err != nil {
			return &Error{Op: "read git settings", Path: path, Err: err}
		}
		h, err := r.storeBlob(data)
		if err != nil {
			return err
		}
		out[key] = h.String()
		return nil
	}
	if err := add("config", filepath.Join(r.commonDir, "config"), false); err != nil {
		return nil, err
	}
	if r.gitDir != r.commonDir {
		if err := add("worktree/config.worktree", filepath.Join(r.gitDir, "config.worktree"), true); err != nil {
			return nil, err
		}
	}
	// A linked work tree's .git file names its git directory: rewritten,
	// it names a repository of the agent's, with settings of its own.
	dot := filepath.Join(r.root, ".git")
	out[DotGitCheckedKey] = "1"
	if fi, err := os.Lstat(dot); err == nil && !fi.IsDir() {
		if fi.Mode().IsRegular() {
			if err := add(DotGitKey, dot, true); err != nil {
				return nil, err
			}
		} else {
			t, _ := os.Readlink(dot)
			out[DotGitKey] = plumbing.ComputeHash(plumbing.BlobObject, []byte(fi.Mode().Type().String()+" "+t)).String()
		}
	}
	hooks := filepath.Join(r.commonDir, "hooks")
	entries, err := os.ReadDir(hooks)
	if err != nil && !isNotExist(err) {
		return nil, &Error{Op: "read git settings", Path: hooks, Err: err}
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 || !e.Type().IsRegular() {
			t, _ := os.Readlink(filepath.Join(hooks, e.Name()))
			out["hooks/"+e.Name()] = plumbing.ComputeHash(plumbing.BlobObject, []byte(e.Type().String()+" "+t)).String()
			continue
		}
		if err := add("hooks/"+e.Name(), filepath.Join(hooks, e.Name()), true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GitDirKey is the GitSettings key whose value is the (common) git
// directory the settings were read from: settings read from another
// clone (a run taken over by another host) are not comparable.
const GitDirKey = "@gitdir"

// DotGitKey is the GitSettings key of the work tree's .git file, there
// when it is not a directory.
const DotGitKey = ".git"

// DotGitCheckedKey is the GitSettings key that says the work tree's .git
// was looked at (DotGitKey): settings recorded by a gaffer before it lack
// both, and say nothing of the .git file.
const DotGitCheckedKey = "@dotgit"

// GitSettingsPath returns the path of a GitSettings key.
func (r *Repo) GitSettingsPath(key string) string {
	if key == DotGitKey {
		return filepath.Join(r.root, ".git")
	}
	if k, ok := strings.CutPrefix(key, "worktree/"); ok {
		return filepath.Join(r.gitDir, filepath.FromSlash(k))
	}
	return filepath.Join(r.commonDir, filepath.FromSlash(key))
}

// ChangedSettings lists, sorted, the keys whose hash differs between two
// GitSettings results (added, changed or removed).
func ChangedSettings(before, now map[string]string) []string {
	var out []string
	for k, v := range now {
		if b, ok := before[k]; !ok || b != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := now[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
