package state

import (
	"os/exec"
	"strings"
	"testing"
)

// state is the leaf of gaffer's import graph: the engine, the workflow,
// the store and the CLI import it, and it imports none of them (not
// workspace either, for its slug and directory names: see naming.go).
// The test asks the go command for state's dependencies, as
// `go list -deps ./state` prints them.
func TestStateImportsNoGafferPackage(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list state's imports: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{.Module}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	self, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}} {{.Module}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	path, module, ok := strings.Cut(strings.TrimSpace(string(self)), " ")
	if !ok || module == "" || module == "<nil>" {
		t.Fatalf("go list gave no module for state: %q", self)
	}
	var deps int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		imp, mod, _ := strings.Cut(line, " ")
		deps++
		if mod == module && imp != path {
			t.Errorf("state depends on %s, a package of its own module", imp)
		}
	}
	if deps < 2 {
		t.Fatalf("go list -deps listed %d packages, want state and the standard library:\n%s", deps, out)
	}
}
