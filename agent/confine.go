package agent

import (
	"strconv"

	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
)

// Confinement says how Toolbox.Run confines commands.
type Confinement int

const (
	// ConfineAuto confines commands' writes with Landlock where the kernel
	// has it (Linux 5.13 and later), and otherwise runs them unconfined,
	// telling ToolboxOptions.Warn once.
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

// writableDirs returns the directories besides the command's TMPDIR that a
// confined command may write under: the repository and the Go build and
// module caches (so "go test" works), from env or their defaults.
func (t *Toolbox) writableDirs(env []string) []string {
	return append([]string{t.root}, environ.GoCaches(env)...)
}
