package agent

import (
	"os/exec"
	"strconv"

	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/proc"
)

// Confinement says how Toolbox.Run confines commands.
type Confinement int

const (
	// ConfineAuto confines commands' writes with Landlock where the kernel
	// has it (Linux 5.13 and later), and starts them in a user namespace of
	// their own where the kernel allows one, so that they cannot read the
	// environment or memory of processes outside their session (see
	// proc.Isolation), and, through the sandbox helper (SandboxMain), in
	// a PID namespace of their own where the kernel allows one, so that
	// they see and signal only their own processes and all of them end
	// with the command; the Go caches are layered for them (see
	// proc.GoCaches). What the kernel refuses, ToolboxOptions.Warn is told
	// once.
	ConfineAuto Confinement = iota
	// ConfineOff runs commands unconfined.
	ConfineOff
)

// String returns "auto" or "off".
func (c Confinement) String() string {
	switch c {
	case ConfineAuto:
		return "auto"
	case ConfineOff:
		return "off"
	}
	return "Confinement(" + strconv.Itoa(int(c)) + ")"
}

// confinement returns the rules to confine commands with, or nil when they
// run unconfined (then Warn has been told why, once).
func (t *Toolbox) confinement() (*landlock.Rules, error) {
	if t.opts.Confine == ConfineOff {
		return nil, nil
	}
	rules, why := landlock.Available()
	if rules == nil {
		t.warn.Do(func() {
			if t.opts.Warn != nil {
				t.opts.Warn("agent commands run unconfined (they can write outside the repository): " + why)
			}
		})
	}
	return rules, nil
}

// isolate makes cmd start in a user namespace of its own (see
// proc.Isolation) unless confinement is off; where the kernel refuses one,
// Warn is told once and cmd starts as it is.
func (t *Toolbox) isolate(cmd *exec.Cmd) {
	if t.opts.Confine == ConfineOff {
		return
	}
	iso, why := t.iso.Get()
	if iso == nil {
		t.isoWarn.Do(func() {
			if t.opts.Warn != nil {
				t.opts.Warn("agent commands can read the environment of gaffer and of your shell: " + why)
			}
		})
		return
	}
	iso.Apply(cmd)
}

// sandbox returns the sandbox helper's executable and the Sandbox to
// start a command through (see proc.Helper.For): "" when it starts
// without. Warn is told once when the helper cannot make a writable
// directory's .git read-only (an in-place run), and once when it cannot
// give commands a PID namespace of their own.
func (t *Toolbox) sandbox(writable []string, landlock bool, layers []proc.Layer) (string, proc.Sandbox) {
	exe, sb := t.helper.For(writable, landlock, layers)
	if _, why := t.helper.Get(); why != "" && len(proc.GitDirsIn(writable)) > 0 {
		t.helperWarn.Do(func() { t.warnf("agent commands can write the repository's .git in an in-place run: " + why) })
	}
	if ok, why := t.helper.PID(); !ok {
		t.pidWarn.Do(func() { t.warnf(PIDNamespaceWarning + why) })
	}
	return exe, sb
}

// warnf tells ToolboxOptions.Warn, when there is one.
func (t *Toolbox) warnf(msg string) {
	if t.opts.Warn != nil {
		t.opts.Warn(msg)
	}
}

// PIDNamespaceWarning begins what Warn is told when sessions and commands
// cannot get a PID namespace of their own; why follows it.
const PIDNamespaceWarning = "agent commands can see every process and its command line, and signal gaffer (no PID namespace of their own): "

// PIDNamespaceRefused says why the agents' sessions and commands cannot
// get a PID namespace of their own, or "" when they can: the kernel
// refuses one inside a user namespace (a limit of
// user.max_pid_namespaces or user.max_user_namespaces, AppArmor, not
// Linux), or the program does not call SandboxMain. It finds out by
// starting the sandbox helper, as the first session would; a run's start
// line and `gaffer config show` say it.
func PIDNamespaceRefused() string {
	var h proc.Helper
	if ok, why := h.PID(); !ok {
		return why
	}
	return ""
}

// PIDNamespaceNote is what a run's start line and `gaffer config show`
// add when the agents' sessions and commands cannot get a PID namespace
// of their own (see PIDNamespaceRefused): "" when they can.
func PIDNamespaceNote() string {
	why := PIDNamespaceRefused()
	if why == "" {
		return ""
	}
	return "agents get no PID namespace of their own, so they can see every process's command line and signal gaffer: " + why
}
