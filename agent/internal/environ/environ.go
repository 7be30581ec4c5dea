package environ

import (
	"os"
	"path/filepath"
	"strings"
)

// Without returns env without the variable name.
func Without(env []string, name string) []string {
	if name == "" {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n != name {
			out = append(out, kv)
		}
	}
	return out
}

// Get returns the value of the last NAME=value entry for name in env, or
// "".
func Get(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, _ := strings.Cut(env[i], "="); n == name {
			return v
		}
	}
	return ""
}

// GoCaches returns the Go build and module cache directories of env (its
// GOCACHE, GOMODCACHE and GOPATH, else their defaults), which a confined
// command may write to so that "go build" and "go test" work.
func GoCaches(env []string) []string {
	var dirs []string
	if c := Get(env, "GOCACHE"); c != "" && c != "off" {
		dirs = append(dirs, c)
	} else if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "go-build"))
	}
	switch {
	case Get(env, "GOMODCACHE") != "":
		dirs = append(dirs, Get(env, "GOMODCACHE"))
	case Get(env, "GOPATH") != "":
		dirs = append(dirs, filepath.Join(filepath.SplitList(Get(env, "GOPATH"))[0], "pkg", "mod"))
	default:
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, "go", "pkg", "mod"))
		}
	}
	return dirs
}
