package cli

import (
	"errors"
	"io"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gaffer-dev/gaffer/profile"
)

// IO is where the workflow commands read and write. Commands never touch
// os.Stdin or os.Stdout themselves.
type IO struct {
	In  io.Reader // answers to the approval question; nil: no terminal
	Out io.Writer
	Err io.Writer
	// Terminal reports whether In and Out are an interactive terminal:
	// then run asks for approval and draws the phase tree. Nil: detect
	// from In and Out being character devices.
	Terminal func() bool
	// Keys, when set, takes the variables a run's profile names as keys
	// out of this process's environment when its drivers are built (see
	// KeyVault); gaffer's main sets it. Nil leaves the environment alone.
	Keys *profile.KeyVault
	// LimitMemory, set by gaffer's main, keeps the heap of a command that
	// drives a run in this process (not serve, not a reading command)
	// near what it holds: a soft memory limit, unless GOMEMLIMIT is set
	// (package memlimit). Tests leave it off: the limit is the process's.
	LimitMemory bool
	// Program is the command that started gaffer as the user typed it
	// (os.Args[0]; gaffer's main sets it). The demo names it in the
	// commands it suggests when gaffer on PATH is not this program
	// (./bin/gaffer right after make build). "": gaffer.
	Program string

	version string  // the program's version, told on the control socket
	screen  *screen // keeps the phase tree pinned below Out on a terminal (screen.go); nil: none
}

// quietOnClosedPipe returns o with Out and Err, when they are pipes or
// files, through a closedPipeWriter: once the reader of a pipe has gone
// (`gaffer run … | head`), nothing more is written there and the command
// goes on (main keeps SIGPIPE from ending the process). A terminal and a
// test's buffer are left as they are.
func (o IO) quietOnClosedPipe() IO {
	wrap := func(w io.Writer) io.Writer {
		if f, ok := w.(*os.File); ok && !isCharDevice(f) {
			return &closedPipeWriter{w: f}
		}
		return w
	}
	o.Out, o.Err = wrap(o.Out), wrap(o.Err)
	return o
}

// closedPipeWriter writes to w until a write fails because the pipe's
// reader has gone (EPIPE); from then on it takes every write without
// writing it, so that a run whose output nobody reads keeps working and
// says nothing more on that pipe.
type closedPipeWriter struct {
	w      io.Writer
	closed atomic.Bool
}

func (p *closedPipeWriter) Write(b []byte) (int, error) {
	if p.closed.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.closed.Store(true)
		return len(b), nil
	}
	return n, err
}

// serialized returns o with Out and Err, when they are not files, behind
// one lock they share: a phase's lanes write their progress at once, from
// goroutines of their own, and a writer such as a buffer takes one write
// at a time (an *os.File already does).
func (o IO) serialized() IO {
	mu := new(sync.Mutex)
	wrap := func(w io.Writer) io.Writer {
		if _, ok := w.(*os.File); ok || w == nil {
			return w
		}
		return &lockedWriter{mu: mu, w: w}
	}
	o.Out, o.Err = wrap(o.Out), wrap(o.Err)
	return o
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// live returns o with Out, and Err when it writes to the same terminal,
// going through one screen, so that a run's phase tree can stay pinned
// below every other line and be redrawn in place. Off a terminal it
// returns o as it is.
func (o IO) live() IO {
	if o.screen != nil || !o.terminal() || plainTerminal(os.Getenv) {
		return o
	}
	out := o.Out
	o.screen = newScreen(out, termSize(out))
	o.Out = o.screen.writer(out)
	if o.Err != nil && (sameWriter(o.Err, out) || isCharDevice(o.Err)) {
		o.Err = o.screen.writer(o.Err)
	}
	return o
}

// plainTerminal reports whether the terminal asks for plain lines: TERM
// is dumb (it cannot move the cursor) or NO_COLOR is set (no-color.org).
// Then nothing is redrawn in place: the phase tree is printed after each
// phase-level step, and status --watch prints each change below the last.
func plainTerminal(getenv func(string) string) bool {
	return getenv("TERM") == "dumb" || getenv("NO_COLOR") != ""
}

// sameWriter reports whether a and b are the same writer, without
// comparing values of an incomparable type (a panic).
func sameWriter(a, b io.Writer) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

func (o IO) terminal() bool {
	if o.Terminal != nil {
		return o.Terminal()
	}
	if o.screen != nil {
		return true // live found Out a terminal, and wrapped it
	}
	return o.In != nil && isCharDevice(o.In) && isCharDevice(o.Out)
}

func isCharDevice(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
