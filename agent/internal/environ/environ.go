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
	build, mod := GoCacheDirs(env)
	for _, d := range []string{build, mod} {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// GoCacheDirs returns the Go build cache (GOCACHE, else its default under
// the user's cache directory; "" when it is off) and module cache
// (GOMODCACHE, else GOPATH's first entry's pkg/mod, else ~/go/pkg/mod)
// of env, as the go command finds them.
func GoCacheDirs(env []string) (build, mod string) {
	if c := Get(env, "GOCACHE"); c != "" && c != "off" {
		build = c
	} else if c == "" {
		build = userCache()
	}
	switch {
	case Get(env, "GOMODCACHE") != "":
		mod = Get(env, "GOMODCACHE")
	case Get(env, "GOPATH") != "":
		mod = filepath.Join(filepath.SplitList(Get(env, "GOPATH"))[0], "pkg", "mod")
	default:
		if home := home(env); home != "" {
			mod = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	return build, mod
}

// userCache is the default build cache: os.UserCacheDir's go-build.
func userCache() string {
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "go-build")
	}
	return ""
}

// home is env's HOME, else this process's.
func home(env []string) string {
	if h := Get(env, "HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}
