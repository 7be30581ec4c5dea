package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// journalVersion is the layout version of the journal file.
const journalVersion = 1

// journal is what the pool persists: the jobs executing and the jobs queued,
// each with the time it entered the queue (Job.Queued, "queued_at"). The
// time came after version 1 and did not change it: a journal without it
// loads, its jobs queued when New reads it, and a serve before the time
// ignores it.
type journal struct {
	Version int   `json:"version"`
	Active  []Job `json:"active"`
	Queued  []Job `json:"queued"`
}

// JournalPath returns the journal file of the store directory store:
// "<store>.serve.json", beside the store.
func JournalPath(store string) string { return filepath.Clean(store) + ".serve.json" }

func readJournal(path string) (journal, error) {
	var j journal
	if path == "" {
		return j, nil
	}
	// A temp file left by a crash mid-write is garbage: the rename never
	// happened. PATH.tmp is the one versions before atomicfile wrote.
	_ = os.Remove(path + ".tmp")
	_, _ = atomicfile.RemoveTemps(path)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return j, fmt.Errorf("%w: %w", ErrJournal, err)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return j, fmt.Errorf("%w: %s: %w", ErrJournal, path, err)
	}
	if j.Version != journalVersion {
		return j, fmt.Errorf("%w: %s: version %d, want %d", ErrJournal, path, j.Version, journalVersion)
	}
	return j, nil
}

// writeJournal replaces the journal crash-safely (atomicfile.WriteFile).
func writeJournal(path string, j journal) error {
	if path == "" {
		return nil
	}
	j.Version = journalVersion
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("%w: encode: %w", ErrJournal, err)
	}
	if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	return nil
}
