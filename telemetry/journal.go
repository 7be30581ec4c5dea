package telemetry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// The kinds of journaled spans: the root and the phase are reopened by
// the process that resumes the run, the wait is ended then, and a node's
// span still journaled was cut by a crash.
const (
	kindRoot  = "root"
	kindPhase = "phase"
	kindWait  = "wait"
	kindNode  = "node"
)

// record is one open span in the journal.
type record struct {
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	SpanID string    `json:"span_id"`
	Start  time.Time `json:"start"`
	Phase  bool      `json:"phase,omitempty"` // the span is under the phase span
}

// journal is a run's open spans and where its phases are, kept in a file
// of the telemetry directory beside the store (one per run, named by its
// trace id). No secret is in it: names, ids and times.
type journal struct {
	path     string // "" keeps nothing
	modified time.Time
	Phase    int               `json:"phase"`
	Attempt  int               `json:"attempt"`
	Recs     map[string]record `json:"spans"`
}

// openJournal reads run id's journal in dir, or starts an empty one.
func openJournal(dir, id string) journal {
	j := journal{Phase: 1, Attempt: 1}
	if dir != "" {
		j.path = filepath.Join(dir, TraceID(id).String()+".json")
		if b, err := os.ReadFile(j.path); err == nil && json.Unmarshal(b, &j) == nil {
			if fi, err := os.Stat(j.path); err == nil {
				j.modified = fi.ModTime()
			}
		}
	}
	if j.Recs == nil {
		j.Recs = map[string]record{}
	}
	j.Phase, j.Attempt = max(j.Phase, 1), max(j.Attempt, 1)
	return j
}

// open journals span s under key.
func (j *journal) open(kind, key, name string, s trace.Span, start time.Time) {
	j.Recs[key] = record{Kind: kind, Name: name, SpanID: s.SpanContext().SpanID().String(), Start: start}
}

// close removes key's span.
func (j *journal) close(key string) { delete(j.Recs, key) }

// save writes the journal; a failure to write costs only the marking of
// cut spans after a crash, so it is not an error of the run.
func (j *journal) save() {
	if j.path == "" {
		return
	}
	b, err := json.Marshal(j)
	if err != nil {
		return
	}
	if err := os.WriteFile(j.path, b, 0o600); err != nil && os.IsNotExist(err) {
		if os.MkdirAll(filepath.Dir(j.path), 0o700) == nil {
			_ = os.WriteFile(j.path, b, 0o600)
		}
	}
}

// remove deletes the journal of a run that ended.
func (j *journal) remove() {
	if j.path != "" {
		_ = os.Remove(j.path)
	}
}

// errNoJournal is openJournalFile's error for a run without a journal.
var errNoJournal = errors.New("telemetry: no journal")

// openJournalFile reports whether run id has a journal in dir.
func openJournalFile(dir, id string) (string, error) {
	p := filepath.Join(dir, TraceID(id).String()+".json")
	if _, err := os.Stat(p); err != nil {
		return "", errNoJournal
	}
	return p, nil
}
