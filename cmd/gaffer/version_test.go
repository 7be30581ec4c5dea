package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "4c387b7a1b2c3d4e5f60718293a4b5c6d7e8f901"}, {Key: "vcs.time", Value: "2026-11-28T04:00:00Z"}}
	for _, tc := range []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		ok            bool
		want          string
	}{
		{"no build info", "", nil, false, "dev"},
		{"a tag from go install @latest", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, true, "v0.4.0"},
		{"a local build", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true, "(devel) (revision 4c387b7a1b2c, 2026-11-28T04:00:00Z)"},
		{"a pseudo-version naming the revision", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128040000-4c387b7a1b2c"}, Settings: vcs}, true, "v0.0.0-20261128040000-4c387b7a1b2c"},
		{"modified", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128040000-4c387b7a1b2c+dirty"}, Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, true, "v0.0.0-20261128040000-4c387b7a1b2c+dirty (revision 4c387b7a1b2c, modified, 2026-11-28T04:00:00Z)"},
	} {
		if got := versionOf(tc.ldflags, tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestBuiltBinaryPrintsItsRevision builds the real binary from a fresh
// clone of this repository's HEAD (as go install does from a module) and
// checks that --version names the module version and the
// commit it was built from, not "dev".
func TestBuiltBinaryPrintsItsRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// -trimpath, as make build: the clone's packages compile as the work
	// tree's do, so go's cache has them from any other such build (cli's
	// tests build one) instead of compiling every package again.
	bin := filepath.Join(t.TempDir(), "gaffer")
	build := exec.Command("go", "build", "-buildvcs=true", "-trimpath", "-o", bin, "./cmd/gaffer")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if !strings.HasPrefix(got, "gaffer version ") || strings.Contains(got, " dev") || !strings.Contains(got, string(rev[:12])) {
		t.Fatalf("--version printed %q, want the module version and revision %s", got, rev[:12])
	}
	if !regexp.MustCompile(`^gaffer version (v\d|\(devel\))`).MatchString(got) {
		t.Fatalf("--version printed %q: no module version", got)
	}
	_ = os.Remove(bin)
}
