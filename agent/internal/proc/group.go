package proc

import "os/exec"

// Group is a started command's process group: Start and StartIn return
// it. Kill ends what is left of it, Forget drops its record; a command's
// runner calls both once the command has exited (or has been stopped).
type Group struct {
	cmd    *exec.Cmd
	forget func()
	// ns is the user namespace the command started in, when it is the
	// command's own and no PID namespace of its own ends it: Kill then
	// ends the processes of that namespace wherever they went.
	ns nsID
}

// Forget removes the group's record (see Recorder); call it after Kill.
func (g *Group) Forget() { g.forget() }
