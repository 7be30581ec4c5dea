package events

import (
	"os/exec"
	"strings"
	"testing"
)

// events is a leaf: nodes emits its payloads and metrics, the progress view
// and serve's log read them, so it may import none of them (nor anything
// outside the standard library). The test asks the go command for its
// dependencies, as `go list -deps ./events` prints them.
func TestEventsImportsOnlyTheStandardLibrary(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list events' imports: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	self, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	path := strings.TrimSpace(string(self))
	var deps int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		imp, std, _ := strings.Cut(line, " ")
		deps++
		if imp != path && std != "true" {
			t.Errorf("events depends on %s, which is not in the standard library", imp)
		}
	}
	if deps < 2 {
		t.Fatalf("go list -deps listed %d packages, want events and the standard library:\n%s", deps, out)
	}
}
