package workspace

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// parseIgnore reads the patterns of one ignore file. domain is the
// directory the file is in, as path components (nil for the root and for
// files outside the tree). Comments, blank lines, a byte order mark and
// carriage returns are dropped; escapes (\#, \!, "\ ") are left to the
// pattern matcher, which treats a backslash as quoting the next character.
func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// basePatterns returns the patterns that come from outside the tree, in
// increasing priority: core.excludesFile, then .git/info/exclude.
func (r *Repo) basePatterns(cc coreConfig) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, p := range []string{cc.excludesFile, filepath.Join(r.commonDir, "info", "exclude")} {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			ps = append(ps, parseIgnore(b, nil)...)
		}
	}
	return ps
}

// diskIgnoreFile reads dir/.gitignore from the work tree (dir is a slash
// path, "" for the root); a missing file is no patterns.
func diskIgnoreFile(root string) func(dir string) ([]byte, error) {
	return func(dir string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), ".gitignore"))
		if err != nil && (isNotExist(err) || isDirErr(err)) {
			return nil, nil
		}
		return b, err
	}
}

// walker visits the files of a work tree the way `git status` looks for
// untracked files: depth first in name order, skipping .git, ignored files
// and directories, and not descending into nested repositories.
type walker struct {
	root string
	base []gitignore.Pattern
	// ignoreFile returns the content of dir/.gitignore, or nil.
	ignoreFile func(dir string) ([]byte, error)
	// diskIgnore says ignoreFile reads the work tree: a directory with no
	// .gitignore has no patterns, and ignoreFile is not asked.
	diskIgnore bool
	// skip holds paths that are neither visited nor reported.
	skip pathSet
	// n counts the directories listed; nil counts nothing.
	n *ioCounts
	// file is called for every file and symbolic link that is not ignored.
	file func(rel string) error
	// tracked, when set, holds files that are neither matched against
	// the ignore rules nor passed to file (a tracked file is never
	// ignored, and the caller wants the others).
	tracked map[string]*index.Entry
	// nested is called for every directory that holds a .git of its own.
	nested func(rel string) error
	steps  int
}

func (w *walker) run(ctx context.Context) error {
	return w.dir(ctx, "", nil, w.base)
}

// dir visits directory dir (parts its path's elements) under the ignore
// patterns ps of its parents: its files, then its subdirectories in
// turn, unless it is a nested repository.
func (w *walker) dir(ctx context.Context, dir string, parts []string, ps []gitignore.Pattern) error {
	if w.steps++; w.steps%256 == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	w.n.dir()
	entries, gone, err := w.list(dir)
	if err != nil || gone {
		return err
	}
	if dir != "" && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == ".git" }) {
		// A nested repository (its .git a directory, a file or a link).
		if w.nested != nil {
			return w.nested(dir)
		}
		return nil
	}
	if ps, err = w.patterns(dir, parts, ps, entries); err != nil {
		return err
	}
	m := gitignore.NewMatcher(ps)
	for _, e := range entries {
		if err := w.entry(ctx, dir, parts, ps, m, e); err != nil {
			return err
		}
	}
	return nil
}

// list reads directory dir's entries, a lone .git for a repository that
// cannot be listed; gone says dir was removed while we walk.
func (w *walker) list(dir string) (entries []fs.DirEntry, gone bool, err error) {
	entries, err = os.ReadDir(filepath.Join(w.root, filepath.FromSlash(dir)))
	if err == nil {
		return entries, false, nil
	}
	if dir != "" && isNotExist(err) {
		return nil, true, nil // removed while we walked
	}
	if _, lerr := os.Lstat(filepath.Join(w.root, filepath.FromSlash(dir), ".git")); dir != "" && lerr == nil {
		return []fs.DirEntry{gitEntry{}}, false, nil // unreadable, but a repository
	}
	return nil, false, err
}

// patterns returns ps followed by the patterns of dir's .gitignore, if
// it has one among entries.
func (w *walker) patterns(dir string, parts []string, ps []gitignore.Pattern, entries []fs.DirEntry) ([]gitignore.Pattern, error) {
	if w.diskIgnore && !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == ".gitignore" }) {
		return ps, nil
	}
	data, err := w.ignoreFile(dir)
	if err != nil {
		return nil, err
	}
	if data != nil {
		ps = append(ps[:len(ps):len(ps)], parseIgnore(data, parts)...)
	}
	return ps, nil
}

// entry visits entry e of directory dir, whose matcher is m: a directory
// not ignored is walked, a file or link neither tracked nor ignored is
// reported.
func (w *walker) entry(ctx context.Context, dir string, parts []string, ps []gitignore.Pattern, m gitignore.Matcher, e fs.DirEntry) error {
	name := e.Name()
	rel := path.Join(dir, name)
	if name == ".git" || w.skip.has(rel) {
		return nil
	}
	child := append(parts[:len(parts):len(parts)], name)
	t := e.Type()
	switch {
	case t.IsDir():
		if m.Match(child, true) {
			return nil
		}
		return w.dir(ctx, rel, child, ps)
	case t.IsRegular() || t&fs.ModeSymlink != 0:
		if _, ok := w.tracked[rel]; ok || m.Match(child, false) {
			return nil
		}
		return w.file(rel)
	}
	return nil
}

// gitEntry stands for the .git of a directory that cannot be listed.
type gitEntry struct{}

func (gitEntry) Name() string               { return ".git" }
func (gitEntry) IsDir() bool                { return true }
func (gitEntry) Type() fs.FileMode          { return fs.ModeDir }
func (gitEntry) Info() (fs.FileInfo, error) { return nil, fs.ErrNotExist }
