package telemetry

import (
	"bufio"
	"bytes"
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
	// Link and LinkState are the root's link: the W3C trace context of the
	// span that submitted the run (Tracer.Link).
	Link      string `json:"link,omitempty"`
	LinkState string `json:"link_state,omitempty"`
}

// op is one line of a journal file: a span opened (Rec) or closed, or
// where the phases are.
type op struct {
	Key     string  `json:"k,omitempty"`
	Rec     *record `json:"r,omitempty"`
	Phase   int     `json:"p,omitempty"`
	Attempt int     `json:"a,omitempty"`
}

// journal is a run's open spans and where its phases are, kept in an
// append-only file of the telemetry directory beside the store (one per
// run, named by its trace id; one short write, no fsync, per change, and
// compacted when a process picks the run up). No secret is in it: names,
// ids and times.
type journal struct {
	path     string   // "" keeps nothing
	f        *os.File // appended to; nil when it could not be opened
	modified time.Time
	Phase    int
	Attempt  int
	Recs     map[string]record
}

// openJournal reads run id's journal in dir, or starts an empty one, and
// rewrites it compacted.
func openJournal(dir, id string) journal {
	j := journal{Phase: 1, Attempt: 1, Recs: map[string]record{}}
	if dir == "" {
		return j
	}
	j.path = filepath.Join(dir, TraceID(id).String()+".jsonl")
	if b, err := os.ReadFile(j.path); err == nil {
		if fi, err := os.Stat(j.path); err == nil {
			j.modified = fi.ModTime()
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			var o op
			if json.Unmarshal(sc.Bytes(), &o) != nil {
				continue // a line a crash cut short
			}
			j.apply(o)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_ = enc.Encode(op{Phase: j.Phase, Attempt: j.Attempt})
	for k, r := range j.Recs {
		_ = enc.Encode(op{Key: k, Rec: &r})
	}
	if os.MkdirAll(dir, 0o700) != nil || os.WriteFile(j.path+".tmp", buf.Bytes(), 0o600) != nil || os.Rename(j.path+".tmp", j.path) != nil {
		return j
	}
	j.f, _ = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
	return j
}

func (j *journal) apply(o op) {
	switch {
	case o.Rec != nil:
		j.Recs[o.Key] = *o.Rec
	case o.Key != "":
		delete(j.Recs, o.Key)
	default:
		j.Phase, j.Attempt = max(o.Phase, 1), max(o.Attempt, 1)
	}
}

// write appends o; a failure to write costs only the marking of cut
// spans after a crash, so it is not an error of the run.
func (j *journal) write(o op) {
	if j.f == nil {
		return
	}
	b, err := json.Marshal(o)
	if err != nil {
		return
	}
	_, _ = j.f.Write(append(b, '\n'))
}

// open journals span s under key.
func (j *journal) open(kind, key, name string, s trace.Span, start time.Time, inPhase bool) {
	r := record{Kind: kind, Name: name, SpanID: s.SpanContext().SpanID().String(), Start: start, Phase: inPhase}
	j.Recs[key] = r
	j.write(op{Key: key, Rec: &r})
}

// openRoot journals the run's root span s, with its link to the
// submitter's span when valid.
func (j *journal) openRoot(s trace.Span, start time.Time, link trace.SpanContext) {
	r := record{Kind: kindRoot, Name: "gaffer run", SpanID: s.SpanContext().SpanID().String(), Start: start}
	if link.IsValid() {
		r.Link, r.LinkState = formatTraceParent(link)
	}
	j.Recs["root"] = r
	j.write(op{Key: "root", Rec: &r})
}

// close removes key's span.
func (j *journal) close(key string) {
	if _, ok := j.Recs[key]; ok {
		delete(j.Recs, key)
		j.write(op{Key: key})
	}
}

// setPhase journals where the phases are.
func (j *journal) setPhase(phase, attempt int) {
	j.Phase, j.Attempt = phase, attempt
	j.write(op{Phase: phase, Attempt: attempt})
}

// release closes the file, keeping the journal for the next process.
func (j *journal) release() {
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
}

// remove deletes the journal of a run that ended.
func (j *journal) remove() {
	j.release()
	if j.path != "" {
		_ = os.Remove(j.path)
	}
}

// errNoJournal is openJournalFile's error for a run without a journal.
var errNoJournal = errors.New("telemetry: no journal")

// openJournalFile returns run id's journal in dir, errNoJournal when it
// has none.
func openJournalFile(dir, id string) (string, error) {
	p := filepath.Join(dir, TraceID(id).String()+".jsonl")
	if _, err := os.Stat(p); err != nil {
		return "", errNoJournal
	}
	return p, nil
}
