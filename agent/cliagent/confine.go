package cliagent

import (
	"os"
	"os/exec"
	"slices"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/proc"
)

// confinement returns the rules to confine a session's process with, or nil
// when it runs unconfined (then Options.Warn has been told why, once).
func (d *Driver) confinement() *landlock.Rules {
	if d.opts.Confine == agent.ConfineOff {
		return nil
	}
	rules, why := landlock.Available()
	if rules == nil {
		d.warn.Do(func() {
			if d.opts.Warn != nil {
				d.opts.Warn("CLI agents run unconfined (they can write outside the repository): " + why)
			}
		})
	}
	return rules
}

// isolate makes cmd start in a user namespace of its own (see
// proc.Isolation) unless confinement is off; where the kernel refuses one,
// Options.Warn is told once and cmd starts as it is.
func (d *Driver) isolate(cmd *exec.Cmd) {
	if d.opts.Confine == agent.ConfineOff {
		return
	}
	iso, why := d.iso.Get()
	if iso == nil {
		d.isoWarn.Do(func() {
			if d.opts.Warn != nil {
				d.opts.Warn("CLI agents can read the environment of gaffer and of your shell: " + why)
			}
		})
		return
	}
	iso.Apply(cmd)
}

// sandbox returns the sandbox helper's executable and the Sandbox to
// start a session through (see proc.Helper.For): "" when it starts
// without. Warn is told once when the helper cannot make a writable
// directory's .git read-only (an in-place run), and once when it cannot
// give sessions a PID namespace of their own.
func (d *Driver) sandbox(writable []string, landlock bool, layers []proc.Layer) (string, proc.Sandbox) {
	exe, sb := d.helper.For(writable, landlock, layers)
	if _, why := d.helper.Get(); why != "" && len(proc.GitDirsIn(writable)) > 0 {
		d.helperWarn.Do(func() { d.warnf("CLI agents can write the repository's .git in an in-place run: " + why) })
	}
	if ok, why := d.helper.PID(); !ok {
		d.pidWarn.Do(func() { d.warnf(agent.PIDNamespaceWarning + why) })
	}
	return exe, sb
}

// warnf tells Options.Warn, when there is one.
func (d *Driver) warnf(msg string) {
	if d.opts.Warn != nil {
		d.opts.Warn(msg)
	}
}

// writable returns the paths a confined session may write beneath
// besides the Go caches (see proc.GoCaches): the repository dir, its
// TMPDIR tmp, the agent's own state (its vendor's State, in the command's
// environment env) and the template's Writable. It creates the agent's
// state directories that are missing, since the agent itself could not.
func (d *Driver) writable(dir, tmp string, env []string) []string {
	paths := []string{dir, tmp}
	dirs, files := d.vendor.State(env)
	empty := func(p string) bool { return p == "" }
	dirs, files = slices.DeleteFunc(dirs, empty), slices.DeleteFunc(files, empty)
	for _, p := range dirs {
		_ = os.MkdirAll(p, 0o700) // a failure shows as the agent's own
	}
	paths = append(append(paths, dirs...), files...)
	return append(paths, d.opts.Template.Writable...)
}
