package main

import (
	"runtime/debug"
	"strings"
)

// versionOf is the version gaffer prints: the module version the binary
// was built as (a tag, a pseudo-version, or "(devel)"), then the VCS
// revision and whether the tree had uncommitted changes, as the Go
// toolchain recorded them. ldflags wins over the module version when
// set (-X main.version=…). It is "dev" only when there is no build info.
func versionOf(ldflags string, bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		if ldflags != "" {
			return ldflags
		}
		return "dev"
	}
	v := bi.Main.Version
	if ldflags != "" {
		v = ldflags
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, modified, at string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			at = s.Value
		}
	}
	if rev == "" || strings.Contains(v, shortRev(rev)) && modified != "true" {
		return v
	}
	extra := []string{"revision " + shortRev(rev)}
	if modified == "true" {
		extra = append(extra, "modified")
	}
	if at != "" {
		extra = append(extra, at)
	}
	return v + " (" + strings.Join(extra, ", ") + ")"
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
