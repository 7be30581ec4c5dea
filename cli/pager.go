package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// defaultPager pages long text on a terminal when $PAGER is not set: -F
// quits at once when the text fits the screen, -R passes colours, -X
// leaves the text on the screen after quitting.
const defaultPager = "less -FRX"

// ttyOut returns the terminal stdout writes to, or nil when stdout is not
// a terminal (a pipe, a file, a test's buffer).
func (o IO) ttyOut() *os.File {
	out := o.Out
	if o.screen != nil {
		out = o.screen.term
	}
	if f, ok := out.(*os.File); ok && isCharDevice(f) {
		return f
	}
	return nil
}

// page shows text: through $PAGER (default less -FRX) when stdout is a
// terminal that can take one (pagerFor), written as it is otherwise. A
// pager that cannot be started falls back to writing the text.
func (o IO) page(text string) error {
	tty := o.ttyOut()
	pager, ok := pagerFor(o.getenv, exec.LookPath)
	if !ok {
		tty = nil // plain text, before any question about it
	}
	return pageTo(o.Out, tty, pager, text)
}

// pagerFor returns the pager command line to page through, and false
// when the text is to be written plainly instead: TERM is dumb or
// NO_COLOR is set (plainTerminal: a pager there garbles the text or
// quits unseen), or the pager's program ($PAGER's first word, or less)
// is not on PATH.
func pagerFor(getenv func(string) string, lookPath func(string) (string, error)) (string, bool) {
	if plainTerminal(getenv) {
		return "", false
	}
	pager := getenv("PAGER")
	if strings.TrimSpace(pager) == "" {
		pager = defaultPager
	}
	if _, err := lookPath(strings.Fields(pager)[0]); err != nil {
		return "", false
	}
	return pager, true
}

// pageTo is page with its inputs explicit: tty is stdout's terminal (nil
// when it is not one) and pager the $PAGER command line, run by sh as git
// runs it.
func pageTo(w io.Writer, tty *os.File, pager, text string) error {
	if tty != nil {
		if strings.TrimSpace(pager) == "" {
			pager = defaultPager
		}
		cmd := exec.Command("sh", "-c", pager)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(text), tty, tty
		err := cmd.Run()
		var ee *exec.ExitError
		if err == nil || errors.As(err, &ee) && ee.ExitCode() != 127 {
			return nil // shown; a pager quit early is the reader's choice
		}
	}
	if _, err := io.WriteString(w, text); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
