package cliagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/gitcmd"
)

// maxHashedFile is the largest file whose content is hashed to notice a
// change; larger files are compared by size and modification time.
const maxHashedFile = 16 << 20

// treeState maps each path git reports as changed or untracked to its
// status and a fingerprint of its content.
type treeState map[string]string

// snapshotTree returns the repository's dirty paths, from
// "git status --porcelain", run on repo (named, never found through the
// work tree's .git file). ok is false when git cannot be run.
func snapshotTree(ctx context.Context, repo gitcmd.Repo, env []string) (treeState, bool) {
	cmd := repo.Command(ctx, env, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	st := treeState{}
	for _, entry := range bytes.Split(out, []byte{0}) {
		if len(entry) < 4 {
			continue
		}
		status, path := string(entry[:2]), string(entry[3:])
		st[path] = status + " " + fingerprint(filepath.Join(repo.WorkTree, filepath.FromSlash(path)))
	}
	return st, true
}

// ErrGitFile is matched by the error of a session whose work tree's .git
// names a git directory the session itself could have written: an
// earlier session rewrote it (see workTreeGit).
var ErrGitFile = errors.New("agent: the work tree's .git names a git directory that agents can write")

// workTreeGit returns the repository of the work tree dir as it stands
// before a session: dir/.git, a directory, or the git directory a .git
// file names (a linked work tree's). ok is false when dir is not a work
// tree's root. The session's git runs on what it returns, never on what
// the .git file says afterwards: an agent may rewrite it to name a
// repository of its own, whose filters git would run. For a confined
// session (writable: the paths it may write), a .git file naming a
// git directory, or a common directory, beneath one of them is refused
// with ErrGitFile, as are a .git that is a symbolic link and a .git file
// that is not one of git's.
func workTreeGit(dir string, writable []string) (repo gitcmd.Repo, ok bool, err error) {
	dot := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dot)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return gitcmd.Repo{}, false, nil
	case err != nil:
		return gitcmd.Repo{}, false, err
	case fi.IsDir():
		return gitcmd.Repo{GitDir: dot, WorkTree: dir}, true, nil
	case !fi.Mode().IsRegular():
		return gitcmd.Repo{}, false, fmt.Errorf("%w: %s is a %v, not git's", ErrGitFile, dot, fi.Mode().Type())
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		return gitcmd.Repo{}, false, err
	}
	target, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !found {
		return gitcmd.Repo{}, false, fmt.Errorf("%w: %s is not a gitdir file", ErrGitFile, dot)
	}
	gitDir := strings.TrimSpace(target)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	checked := []string{gitDir}
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		checked = append(checked, common)
	}
	for _, p := range checked {
		for _, w := range writable {
			if beneath(p, w) {
				return gitcmd.Repo{}, false, fmt.Errorf("%w: %s names %s, beneath %s", ErrGitFile, dot, gitDir, w)
			}
		}
	}
	return gitcmd.Repo{GitDir: gitDir, WorkTree: dir}, true, nil
}

// beneath reports whether p is dir or beneath it, symbolic links
// resolved where they can be.
func beneath(p, dir string) bool {
	real := func(x string) string {
		if r, err := filepath.EvalSymlinks(x); err == nil {
			return r
		}
		return filepath.Clean(x)
	}
	rel, err := filepath.Rel(real(dir), real(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// fingerprint identifies a file's content: a hash, or size and time for a
// large file, or "-" when it is missing.
func fingerprint(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "-"
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxHashedFile {
		return fi.Mode().String() + " " + fi.ModTime().String() + " " + strconv.FormatInt(fi.Size(), 10)
	}
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "?"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// changedPaths returns, sorted, the paths whose status or content differs
// between two snapshots: files the session created, changed, deleted or
// put back.
func changedPaths(before, after treeState) []string {
	var out []string
	for p, s := range after {
		if before[p] != s {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
