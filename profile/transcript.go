package profile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// Transcripts: every agent session's messages are kept for its run, one
// JSON-lines file per session in <store>.logs/<run>/, named
// NNN-<role>-p<phase>-a<attempt>-i<iteration>.jsonl so that names sort in
// the order the sessions started; a lane's session (a phase of several
// lanes) adds its task ids, -t<id>+<id>, which `gaffer logs --task`
// selects by. They are written as the messages come
// (so `gaffer logs --follow` in another terminal sees them), bounded
// (MaxTranscriptText per message, maxTranscriptBytes per session) and
// redacted (the values of the run's keys and of every variable named like
// a secret). The directory is private (0700, files 0600), like the store.
const (
	MaxTranscriptText  = 8 << 10 // the longest text of one message kept, in bytes
	maxTranscriptBytes = 2 << 20
)

// TranscriptLine is one line of a transcript file.
type TranscriptLine struct {
	Time    time.Time    `json:"time"`
	Kind    string       `json:"kind"` // text, tool_call, tool_result, usage; report (the session's end); truncated
	Tool    string       `json:"tool,omitempty"`
	Input   string       `json:"input,omitempty"`
	Text    string       `json:"text,omitempty"`
	IsError bool         `json:"is_error,omitempty"`
	Usage   *state.Usage `json:"usage,omitempty"`
}

// transcribed is a driver whose sessions are written down.
type transcribed struct {
	inner  agent.Driver
	dir    string // <store>.logs
	redact func(string) string
	mu     *sync.Mutex // orders the sequence numbers of one process's sessions
}

func (d *transcribed) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	// What the agent says reaches the terminal, the events, the state and
	// the commits through here: every driver's messages and report are
	// redacted as its transcript is.
	next := s.OnMessage
	t, err := d.open(s)
	if err != nil {
		t = nil // a transcript that cannot be written loses the log, not the run
	}
	s.OnMessage = func(m agent.Message) {
		m.Input, m.Text = d.redact(m.Input), d.redact(m.Text)
		if t != nil {
			t.message(m)
		}
		if next != nil {
			next(m)
		}
	}
	rep, err := d.inner.Run(ctx, s)
	rep, err = redactReport(rep, d.redact), redactError(err, d.redact)
	if t == nil {
		return rep, err
	}
	defer t.close()
	end := TranscriptLine{Kind: "report", Text: fmt.Sprintf("%s: %s", rep.Status, rep.Summary)}
	switch {
	case err != nil:
		end.Text, end.IsError = "the session could not run: "+err.Error(), true
	case rep.Error != "":
		end.Text, end.IsError = fmt.Sprintf("%s: %s", rep.Status, rep.Error), true
	}
	t.write(end)
	return rep, err
}

// Redact replaces the secrets in text as the transcripts do: the
// workflow redacts the model calls' content it puts in its events with
// it (telemetry.content).
func (d *transcribed) Redact(text string) string { return d.redact(text) }

// redactReport returns rep with redact applied to every text an agent
// wrote: summary, output, error and the story's facts.
func redactReport(rep agent.Report, redact func(string) string) agent.Report {
	rep.Summary, rep.Output, rep.Error = redact(rep.Summary), redact(rep.Output), redact(rep.Error)
	f := &rep.Story
	f.Decisions = slices.Clone(f.Decisions)
	for i, d := range f.Decisions {
		f.Decisions[i].Topic, f.Decisions[i].What, f.Decisions[i].Why = redact(d.Topic), redact(d.What), redact(d.Why)
	}
	for _, l := range []*[]string{&f.Commands, &f.Methods, &f.Dependencies, &f.Requirements, &f.Recommendations} {
		*l = slices.Clone(*l)
		for i, v := range *l {
			(*l)[i] = redact(v)
		}
	}
	return rep
}

// redactingWriter writes what it is given with redact applied to each
// write: the script driver's progress lines and its commands' output.
type redactingWriter struct {
	w      io.Writer
	redact func(string) string
}

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redactError returns err with redact applied to its text; errors.Is and
// errors.As still see the original.
func redactError(err error, redact func(string) string) error {
	if err == nil {
		return nil
	}
	if msg := redact(err.Error()); msg != err.Error() {
		return &redactedErr{msg: msg, err: err}
	}
	return err
}

type redactedErr struct {
	msg string
	err error
}

func (e *redactedErr) Error() string { return e.msg }
func (e *redactedErr) Unwrap() error { return e.err }

// transcript is one session's open file.
type transcript struct {
	mu      sync.Mutex
	f       *os.File
	written int
	full    bool
	redact  func(string) string
}

func (d *transcribed) open(s agent.Session) (*transcript, error) {
	dir := filepath.Join(d.dir, s.RunID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	_ = os.Chmod(d.dir, 0o700)
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			n++
		}
	}
	name := fmt.Sprintf("%03d-%s-p%d-a%d-i%d", n, s.Role, s.Phase, s.Attempt, s.Iteration)
	if s.Lane > 0 && len(s.Tasks) > 0 {
		name += "-t" + strings.Join(s.Tasks, "+") // a lane's session: its task ids (digits, letters, dots)
	}
	name += ".jsonl"
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &transcript{f: f, redact: d.redact}, nil
}

func (t *transcript) message(m agent.Message) {
	l := TranscriptLine{Kind: m.Kind.String(), Tool: m.Tool, Input: m.Input, Text: m.Text, IsError: m.IsError}
	if m.Kind == agent.UsageUpdate {
		u := m.Usage
		l.Usage = &u
	}
	t.write(l)
}

func (t *transcript) write(l TranscriptLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.full {
		return
	}
	l.Time = time.Now().UTC()
	l.Input, l.Text = capText(t.redact(l.Input)), capText(t.redact(l.Text))
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	if t.written+len(b)+1 > maxTranscriptBytes {
		t.full = true
		b, _ = json.Marshal(TranscriptLine{Time: l.Time, Kind: "truncated",
			Text: fmt.Sprintf("the transcript reached %d bytes; the session's later messages are not kept", maxTranscriptBytes)})
	}
	n, _ := t.f.Write(append(b, '\n'))
	t.written += n
}

func (t *transcript) close() { _ = t.f.Close() }

// capText keeps the first MaxTranscriptText bytes of s (at a rune
// boundary) and says how much was cut.
func capText(s string) string {
	if len(s) <= MaxTranscriptText {
		return s
	}
	cut := MaxTranscriptText
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [%d bytes cut]", s[:cut], len(s)-cut)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// secretRedactor replaces the values of the variables in names (read with
// getenv: the run's keys, which the vault holds) and of every variable of
// environ named like a secret.
func secretRedactor(names []string, getenv func(string) string, environ []string) func(string) string {
	var pairs []string
	add := func(name, val string) {
		if len(val) >= 4 {
			pairs = append(pairs, val, "[redacted "+name+"]")
		}
	}
	for _, n := range names {
		add(n, getenv(n))
	}
	for _, kv := range environ {
		if n, v, ok := strings.Cut(kv, "="); ok && agent.IsSecretName(n) {
			add(n, v)
		}
	}
	if len(pairs) == 0 {
		return func(s string) string { return s }
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}
