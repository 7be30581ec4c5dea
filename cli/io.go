package cli

import (
	"io"
	"os"
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

	ops *opsHooks // the control socket and metrics (ops_hooks.go); nil: none
}

func (o IO) terminal() bool {
	if o.Terminal != nil {
		return o.Terminal()
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
