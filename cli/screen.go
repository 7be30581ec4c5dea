package cli

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// The few ANSI sequences the live frame uses; the tests' screen emulator
// interprets exactly these.
const (
	ansiUp       = "\x1b[%dA" // cursor up N lines
	ansiEraseEnd = "\x1b[J"   // erase from the cursor to the end of the screen
)

// screen keeps a frame (the phase tree) pinned at the bottom of a
// terminal and redraws it in place. Every line written through one of its
// writers goes above the frame: erase the frame, write the line, draw the
// frame again, all under one mutex so nothing interleaves mid-line. With
// no frame live the writers pass bytes straight through.
type screen struct {
	mu      sync.Mutex
	term    io.Writer               // where the frame is drawn (the terminal's stdout)
	size    func() (cols, rows int) // the terminal's size, read at every draw
	frame   []string                // the frame to show while live
	shown   int                     // lines of the frame on the terminal now
	live    bool
	midLine bool // the last byte written was not a newline (a prompt): the frame goes below it
	writers []*screenWriter
}

func newScreen(term io.Writer, size func() (cols, rows int)) *screen {
	return &screen{term: term, size: size}
}

// writer returns a writer to w (the terminal's stdout or stderr) whose
// lines go above the frame.
func (s *screen) writer(w io.Writer) io.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	sw := &screenWriter{s: s, w: w}
	s.writers = append(s.writers, sw)
	return sw
}

// show makes lines the live frame and draws it in place of the last one.
func (s *screen) show(lines []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines = s.fit(lines)
	if s.live && s.shown > 0 && slices.Equal(lines, s.frame) {
		return
	}
	s.frame, s.live = lines, true
	s.redrawLocked()
}

// stop leaves the frame on the terminal as ordinary output: what is
// written next goes below it.
func (s *screen) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live, s.shown, s.frame = false, 0, nil
	s.flushLocked()
}

// clear erases the frame and stops: the terminal is as before the first
// show, plus the lines written above the frame.
func (s *screen) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	s.live, s.frame = false, nil
	s.flushLocked()
}

func (s *screen) eraseLocked() {
	if s.shown > 0 {
		fmt.Fprintf(s.term, ansiUp+"\r"+ansiEraseEnd, s.shown)
		s.shown = 0
	}
}

func (s *screen) redrawLocked() {
	s.eraseLocked()
	if !s.live || len(s.frame) == 0 {
		return
	}
	var b strings.Builder
	if s.midLine { // erasing the frame must not erase the end of a prompt
		b.WriteByte('\n')
		s.midLine = false
	}
	for _, l := range s.frame {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	io.WriteString(s.term, b.String())
	s.shown = len(s.frame)
}

// flushLocked writes the writers' unfinished lines (a prompt, say).
func (s *screen) flushLocked() {
	for _, sw := range s.writers {
		if len(sw.buf) > 0 {
			sw.w.Write(sw.buf)
			sw.buf, s.midLine = nil, true
		}
	}
}

// fit truncates lines to the terminal's width, and keeps the last rows-1
// of them, so that every line of the frame is one line on the terminal
// and cursor-up over the frame lands exactly on its first line.
func (s *screen) fit(lines []string) []string {
	cols, rows := s.size()
	cols, rows = max(cols, 2), max(rows, 2)
	out := make([]string, 0, len(lines))
	if len(lines) > rows-1 {
		lines = append([]string{fmt.Sprintf("… %d more lines", len(lines)-(rows-2))}, lines[len(lines)-(rows-2):]...)
	}
	for _, l := range lines {
		out = append(out, truncate(l, cols-1)) // the last column could wrap early on some terminals
	}
	return out
}

// truncate cuts l to at most n columns (one column a rune: the tree's
// marks and branches are narrow), ending a cut line with "…".
func truncate(l string, n int) string {
	l = strings.ReplaceAll(l, "\t", " ")
	if utf8.RuneCountInString(l) <= n {
		return l
	}
	r := []rune(l)
	return string(r[:n-1]) + "…"
}

// screenWriter is one output (stdout or stderr) of a screen.
type screenWriter struct {
	s   *screen
	w   io.Writer
	buf []byte // an unfinished line while the frame is live
}

func (sw *screenWriter) Write(p []byte) (int, error) {
	s := sw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live {
		if len(sw.buf) > 0 {
			if _, err := sw.w.Write(sw.buf); err != nil {
				return 0, fmt.Errorf("screen: %w", err)
			}
			sw.buf = nil
		}
		if len(p) > 0 {
			s.midLine = p[len(p)-1] != '\n'
		}
		return sw.w.Write(p)
	}
	sw.buf = append(sw.buf, p...)
	i := bytes.LastIndexByte(sw.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	s.eraseLocked()
	_, err := sw.w.Write(sw.buf[:i+1])
	sw.buf = append([]byte(nil), sw.buf[i+1:]...)
	s.redrawLocked()
	if err != nil {
		return 0, fmt.Errorf("screen: %w", err)
	}
	return len(p), nil
}
