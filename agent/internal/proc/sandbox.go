package proc

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// helperExe is the executable that can run as the sandbox helper (see
// HelperMain): set once, by HelperMain, when this program is one. It and
// helperProbe are the package-level variables here: whether the running
// program carries the helper, and what the kernel lets it do, are facts
// of the process, like its executable path.
var helperExe atomic.Pointer[string]

// helperProbe is what probeHelper found, found once for the process:
// every session and command would otherwise start the helper once more
// to ask the same kernel the same questions.
var helperProbe struct {
	once sync.Once
	p    probed
}

// helperArg0 is the argv[0] with which a program that calls HelperMain
// runs as the helper.
const helperArg0 = "gaffer-sandbox-helper"

// Sandbox is how the helper confines a command: the git directories and
// .git files it makes read-only and the caches it layers (in a mount
// namespace of the command's own), whether the command gets a PID
// namespace of its own, and the paths Landlock lets it write beneath.
type Sandbox struct {
	ReadOnly []string `json:"ro"`
	Writable []string `json:"rw"`
	Landlock bool     `json:"landlock"`
	// PID starts the helper as the first process of a new PID namespace,
	// with /proc mounted anew for it: the command sees and signals only
	// the processes of its own session, and when it exits the helper
	// exits and the kernel kills every process left in the namespace.
	PID bool `json:"pid"`
	// Layers are directories (the Go build and module caches) the
	// command sees as they are but whose changes go to a layer of its
	// own (overlayfs): the directory itself is never written.
	Layers []Layer `json:"layers,omitempty"`
	Path   string  `json:"path"` // the program the helper runs
}

// Layer is a directory seen through an overlay whose upper layer, where
// every change goes, is Upper (which the helper makes, with the overlay's
// work directory beside it).
type Layer struct {
	Dir   string `json:"dir"`
	Upper string `json:"upper"`
}

// GitPathsIn returns the .git directories and .git files directly inside
// dirs (an in-place run's repository, a remote host's clone, a run's own
// work tree): a Landlock rule for a directory covers everything beneath
// it, so these are writable unless a mount makes them read-only. A linked
// work tree's .git is a file naming its git directory, which lies
// elsewhere; an agent that rewrote it would get git, run by gaffer or by
// the user in that tree, to read a repository of the agent's making.
func GitPathsIn(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		p := filepath.Join(d, ".git")
		if fi, err := os.Lstat(p); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			out = append(out, p)
		}
	}
	return out
}

// GitDirsIn returns the .git directories of GitPathsIn(dirs): those of
// an in-place run's repository or a remote host's clone, which hold the
// repository's configuration and hooks.
func GitDirsIn(dirs []string) []string {
	var out []string
	for _, p := range GitPathsIn(dirs) {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// Helper says whether commands can be started through the sandbox
// helper: the program carries it (HelperMain) and the kernel lets it
// make a mount namespace inside a user namespace; and whether it can give
// them a PID namespace of their own and layer directories for them. It
// finds out once for the process (the first asks, by starting the helper
// on a temporary directory). Its zero value is ready.
type Helper struct{}

// probed is what probeHelper found.
type probed struct {
	exe, why  string
	pid       bool
	pidWhy    string
	layers    bool
	layersWhy string
}

// Get returns the helper's executable, or "" and why there is none.
func (h *Helper) Get() (string, string) {
	p := h.probe()
	return p.exe, p.why
}

// PID says whether the helper can start commands in a PID namespace of
// their own (Sandbox.PID), or why not.
func (h *Helper) PID() (bool, string) {
	p := h.probe()
	return p.pid, p.pidWhy
}

// Layers says whether the helper can layer directories for commands
// (Sandbox.Layers), or why not.
func (h *Helper) Layers() (bool, string) {
	p := h.probe()
	return p.layers, p.layersWhy
}

// Layered reports whether commands started through the helper get the
// directories they are given layered: the program carries the helper and
// the kernel allows its mount namespace and overlays.
func (h *Helper) Layered() bool {
	p := h.probe()
	return p.exe != "" && p.layers
}

func (h *Helper) probe() *probed {
	helperProbe.once.Do(func() { helperProbe.p = probeHelper() })
	return &helperProbe.p
}
