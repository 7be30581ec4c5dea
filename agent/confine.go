package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
func (t *Toolbox) confinement() (*landlockRules, error) {
	if t.opts.Confine == ConfineOff {
		return nil, nil
	}
	rules, why := landlockAvailable()
	if rules == nil {
		t.warn.Do(func() {
			if t.opts.Warn != nil {
				t.opts.Warn("agent commands run unconfined (they can write outside the repository): " + why)
			}
		})
	}
	return rules, nil
}

// writableDirs returns the directories besides the repository and the
// command's TMPDIR that a confined command may write under: the Go build
// and module caches (so "go test" works), from env or their defaults.
func (t *Toolbox) writableDirs(env []string) []string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if n, v, _ := strings.Cut(env[i], "="); n == name {
				return v
			}
		}
		return ""
	}
	dirs := []string{t.root}
	if c := get("GOCACHE"); c != "" && c != "off" {
		dirs = append(dirs, c)
	} else if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "go-build"))
	}
	switch {
	case get("GOMODCACHE") != "":
		dirs = append(dirs, get("GOMODCACHE"))
	case get("GOPATH") != "":
		dirs = append(dirs, filepath.Join(filepath.SplitList(get("GOPATH"))[0], "pkg", "mod"))
	default:
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, "go", "pkg", "mod"))
		}
	}
	return dirs
}
