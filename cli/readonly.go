package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/workspace"
)

// missingStore returns the store directory a command that only reads or
// needs a run (status, list, history, resume, cancel, delete, …) would open
// when it does not exist or is empty, and "" otherwise:
// those commands say there is no run instead of creating a store. A
// repository that cannot be opened is left to openHost to report.
func missingStore(c *ucli.Context) (string, error) {
	g, storeSet, err := globalsOf(c)
	if err != nil {
		return "", err
	}
	dir := g.Store
	if hoststore.IsURL(dir) {
		return "", nil // a database: opening it says what is wrong
	}
	if !storeSet {
		// The directory openHost opens: .git/gaffer of the repository's root.
		repo, err := workspace.Open(g.Repo)
		if err != nil {
			return "", nil
		}
		dir = filepath.Join(workspace.GitDir(repo.Root()), "gaffer")
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return dir, nil
	}
	// An empty directory (made ready for a store, or a shared one) holds
	// no store either; opening it would create one and make it 0700.
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		return dir, nil
	}
	return "", nil
}

// needStore is noRuns when the store a command would open does not exist:
// a command that needs a run (resume, approve, reject, cancel, delete,
// fork) says so instead of creating an empty store.
func needStore(c *ucli.Context) error {
	dir, err := missingStore(c)
	if err != nil || dir == "" {
		return err
	}
	return noRuns(dir)
}

// noRuns is the answer of status and history in a repository without a
// store: exit 8.
func noRuns(dir string) error {
	return exitf(ExitPrecondition, "%s", noRunsLine(dir))
}

func noRunsLine(dir string) string {
	return "no runs in this repository (no store at " + dir + ")"
}
