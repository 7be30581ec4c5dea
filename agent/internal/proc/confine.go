package proc

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/gaffer-dev/gaffer/agent/internal/environ"
)

// For returns the helper's executable and the Sandbox to start a
// confined command through (see StartIn), for a command that may write
// beneath writable (with Landlock when landlock) and sees layers layered:
// in a PID namespace of its own where the kernel gives one, with the .git
// directories and files of writable's directories read-only. exe is ""
// when the command is to start without the helper: the program does not
// carry it, the kernel refuses its mount namespace, or it would add
// nothing (no PID namespace, no .git to protect, nothing layered).
func (h *Helper) For(writable []string, landlock bool, layers []Layer) (exe string, sb Sandbox) {
	exe, _ = h.Get()
	if exe == "" {
		return "", Sandbox{}
	}
	pid, _ := h.PID()
	ro := GitPathsIn(writable)
	if !pid && len(ro) == 0 && len(layers) == 0 {
		return "", Sandbox{}
	}
	return exe, Sandbox{ReadOnly: ro, Writable: writable, Landlock: landlock, PID: pid, Layers: layers}
}

// GoCaches returns how a command confined to writing beneath some paths
// gets the Go build and module caches of its environment env, so that the
// caches stay the user's (an agent that rewrote a module's extracted
// source there would have every later build compile it), with work a
// directory of the command's own, removed after it: with layered (the
// helper layers for it), as overlays on the caches, whose changes go to
// layers in work; otherwise as a build and module cache of the command's
// own in work, named in the environment returned, the user's module
// cache serving as a read-only proxy (GOPROXY=file://…/cache/download)
// before the environment's own proxy; those caches are made in work
// (and start empty: the command's first build compiles everything).
// writable is what the command must be able to write beneath for either.
func GoCaches(env []string, work string, layered bool) (layers []Layer, writable, out []string) {
	build, mod := environ.GoCacheDirs(env)
	if layered {
		for i, d := range []string{build, mod} {
			if d != "" {
				layers = append(layers, Layer{Dir: d, Upper: filepath.Join(work, "layer"+strconv.Itoa(i))})
				writable = append(writable, d)
			}
		}
		return layers, writable, env
	}
	ownBuild, ownMod := filepath.Join(work, "go-build"), filepath.Join(work, "gomod")
	for _, d := range []string{ownBuild, ownMod} {
		_ = os.MkdirAll(d, 0o700) // Landlock allows what exists; a failure shows as go's own
	}
	out = environ.Without(environ.Without(env, "GOCACHE"), "GOMODCACHE")
	out = append(out, "GOCACHE="+ownBuild, "GOMODCACHE="+ownMod)
	if mod != "" {
		proxy := environ.Get(env, "GOPROXY")
		switch proxy {
		case "":
			proxy = "https://proxy.golang.org,direct"
		case "off":
			proxy = ""
		}
		local := "file://" + filepath.ToSlash(filepath.Join(mod, "cache", "download"))
		if proxy != "" {
			local += "," + proxy
		}
		out = append(environ.Without(out, "GOPROXY"), "GOPROXY="+local)
	}
	return nil, []string{ownBuild, ownMod}, out
}
