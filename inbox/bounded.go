package inbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// errCapped stops a patch written past its cap.
var errCapped = errors.New("inbox: patch cut")

// capped keeps the first max bytes written to it, cut at the last line
// end before the cap, and refuses more (errCapped).
type capped struct {
	b   bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.cut {
		return 0, errCapped
	}
	if room := c.max - c.b.Len(); len(p) > room {
		c.b.Write(p[:room])
		c.cut = true
		b := c.b.Bytes()
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			c.b.Truncate(i + 1)
		} else {
			for len(b) > 0 && !utf8.Valid(b) {
				b = b[:len(b)-1]
			}
			c.b.Truncate(len(b))
		}
		return room, errCapped
	}
	return c.b.Write(p)
}

// session is one agent session's transcript, as the run page shows it:
// its file name (NNN-role-pP-aA-iI) and its last lines.
type session struct {
	Name  string
	Lines []transcriptLine
	Cut   bool // earlier lines were left out
	Error string
}

// transcriptLine is what the page shows of a transcript's line (the file
// has more: times, usage).
type transcriptLine struct {
	Kind    string `json:"kind"`
	Tool    string `json:"tool,omitempty"`
	Input   string `json:"input,omitempty"`
	Text    string `json:"text,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
}

// readSessions reads the transcripts of run id in dir: the newest
// maxSessions sessions, the last maxTranscriptBytes of each. Transcripts
// are redacted as they are written (cli/transcript.go).
func readSessions(dir, id string) []session {
	if dir == "" || id == "" || strings.ContainsAny(id, `/\`) || id == ".." {
		return nil
	}
	runDir := filepath.Join(dir, id)
	ents, err := os.ReadDir(runDir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) > maxSessions {
		names = names[len(names)-maxSessions:]
	}
	var out []session
	for _, n := range names {
		out = append(out, readSession(filepath.Join(runDir, n)))
	}
	return out
}

func readSession(path string) session {
	s := session{Name: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	f, err := os.Open(path)
	if err != nil {
		s.Error = "cannot read the transcript"
		return s
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTranscriptBytes {
		if _, err := f.Seek(fi.Size()-maxTranscriptBytes, io.SeekStart); err == nil {
			s.Cut = true
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxTranscriptBytes+1)
	first := true
	for sc.Scan() {
		if first && s.Cut {
			first = false
			continue // the line the cut began in
		}
		first = false
		var l transcriptLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Kind == "usage" {
			continue
		}
		s.Lines = append(s.Lines, l)
	}
	return s
}
