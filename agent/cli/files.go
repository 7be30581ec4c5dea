package cliagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/gaffer-dev/gaffer/internal/gitcmd"
)

// maxHashedFile is the largest file whose content is hashed to notice a
// change; larger files are compared by size and modification time.
const maxHashedFile = 16 << 20

// treeState maps each path git reports as changed or untracked to its
// status and a fingerprint of its content.
type treeState map[string]string

// snapshotTree returns the repository's dirty paths, from
// "git status --porcelain". ok is false when dir is not a git work tree or
// git cannot be run.
func snapshotTree(ctx context.Context, dir string, env []string) (treeState, bool) {
	cmd := gitcmd.Command(ctx, dir, env, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
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
		st[path] = status + " " + fingerprint(filepath.Join(dir, filepath.FromSlash(path)))
	}
	return st, true
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
