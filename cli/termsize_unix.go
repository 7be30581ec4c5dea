//go:build unix

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// termSize returns the size of the terminal w writes to, read at every
// call (a resized window draws right from the next frame on): 80×24 when
// w is not a terminal or its size is unknown.
func termSize(w io.Writer) func() (cols, rows int) {
	return func() (int, int) {
		if f, ok := w.(*os.File); ok {
			if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 && ws.Row > 0 {
				return int(ws.Col), int(ws.Row)
			}
		}
		return 80, 24
	}
}
