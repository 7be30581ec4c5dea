package proc

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// helperExe is the executable that can run as the sandbox helper (see
// HelperMain): set once, by HelperMain, when this program is one. It is
// the one package-level variable here: whether the running program
// carries the helper is a fact of the process, like its executable path.
var helperExe atomic.Pointer[string]

// helperArg0 is the argv[0] with which a program that calls HelperMain
// runs as the helper.
const helperArg0 = "gaffer-sandbox-helper"

// Sandbox is how the helper confines a command: the git directories it
// makes read-only (in a mount namespace of the command's own), and the
// paths Landlock lets it write beneath.
type Sandbox struct {
	ReadOnly []string `json:"ro"`
	Writable []string `json:"rw"`
	Landlock bool     `json:"landlock"`
	Path     string   `json:"path"` // the program the helper runs
}

// GitDirsIn returns the .git directories directly inside dirs (an
// in-place run's repository, a remote host's clone): a Landlock rule for
// a directory covers everything beneath it, so these are writable unless
// a mount makes them read-only. A linked work tree's .git is a file, and
// its git directory lies elsewhere.
func GitDirsIn(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		p := filepath.Join(d, ".git")
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// Helper says, once, whether commands can be started through the sandbox
// helper: the program carries it (HelperMain) and the kernel lets it
// make a mount namespace inside a user namespace. Its zero value is ready.
type Helper struct {
	once sync.Once
	exe  string
	why  string
}

// Get returns the helper's executable, or "" and why there is none.
func (h *Helper) Get() (string, string) {
	h.once.Do(func() { h.exe, h.why = probeHelper() })
	return h.exe, h.why
}
