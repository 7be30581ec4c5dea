package cli

import (
	"errors"
	"io"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
	// Getenv is the environment gaffer reads its settings from (TERM,
	// NO_COLOR, GAFFER_REPRODUCIBLE_DATES, the configuration's variables,
	// ...): gaffer's main sets os.Getenv, a test its own map, so that
	// tests beside each other need not share the process's environment.
	// Nil: os.Getenv.
	Getenv func(string) string
	// Hooks are the kill tests' pauses (TestHooks); gaffer's main reads
	// them from its environment. Zero: none.
	Hooks TestHooks

	version string  // the program's version, told on the control socket
	screen  *screen // keeps the phase tree pinned below Out on a terminal (screen.go); nil: none
}

// TestHooks are pauses at the moments the kill tests SIGKILL gaffer in:
// each one set announces its moment on Out ("gaffer-test: ...") and
// waits that long before going on. Only tests set them: in-process by
// IO.Hooks, and in a child gaffer through the GAFFER_TEST_PAUSE_*
// variables that gaffer's main reads into them (cmd/gaffer). Zero: no
// pause.
type TestHooks struct {
	AfterCommit  time.Duration // after each commit, before its checkpoint
	AfterPush    time.Duration // after each push to the shared remote, before its checkpoint
	BeforeNotify time.Duration // before each notice's delivery, after its checkpoint (cut short when the host closes)
	AfterRestore time.Duration // after the user's changes are put back, before the stash's ref is dropped
	// Session announces every agent session and pauses before the one it
	// names (profile.SessionPause: the recovery kill tests).
	Session profile.SessionPause
}

// getenv is the variable name's value in o's environment (Getenv).
func (o IO) getenv(name string) string {
	if o.Getenv == nil {
		return os.Getenv(name)
	}
	return o.Getenv(name)
}

// keyenv reads name from the keys gaffer's main has taken out of its
// environment (Keys), then from o's environment (Getenv).
func (o IO) keyenv(name string) string {
	if v, ok := o.Keys.Lookup(name); ok {
		return v
	}
	return o.getenv(name)
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
	if o.screen != nil || !o.terminal() || plainTerminal(o.getenv) {
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
