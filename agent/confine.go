package agent

import (
	"os/exec"

	"github.com/gaffer-dev/gaffer/agent/internal/proc"
	"strconv"

	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
)

// Confinement says how Toolbox.Run confines commands.
type Confinement int

const (
	// ConfineAuto confines commands' writes with Landlock where the kernel
	// has it (Linux 5.13 and later), and starts them in a user namespace of
	// their own where the kernel allows one, so that they cannot read the
	// environment or memory of processes outside their session (see
	// proc.Isolation). What the kernel refuses, ToolboxOptions.Warn is told
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

// sandbox returns the sandbox helper's executable and the .git
// directories it must make read-only when a writable directory holds one
// (an in-place run): Landlock cannot take .git out of the directory it
// allows. "" when there is none, or no helper (Warn is told once).
func (t *Toolbox) sandbox(writable []string) (exe string, ro []string) {
	ro = proc.GitDirsIn(writable)
	if len(ro) == 0 {
		return "", nil
	}
	exe, why := t.helper.Get()
	if exe == "" {
		t.helperWarn.Do(func() {
			if t.opts.Warn != nil {
				t.opts.Warn("agent commands can write the repository's .git in an in-place run: " + why)
			}
		})
	}
	return exe, ro
}

// writableDirs returns the directories besides the command's TMPDIR that a
// confined command may write under: the repository and the Go build and
// module caches (so "go test" works), from env or their defaults.
func (t *Toolbox) writableDirs(env []string) []string {
	return append([]string{t.root}, environ.GoCaches(env)...)
}
