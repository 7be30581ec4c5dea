package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gafferLimited runs the gaffer binary with its address space limited to
// 4 GiB (ulimit -v), so that a read without a bound fails fast instead of
// eating the machine's memory, and returns its output and exit code.
func gafferLimited(t *testing.T, bin, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -v 4194304 && exec "$@"`, "sh", bin}, args...)...)
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("gaffer %v: %v", args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestInputsAreReadThroughABound gives gaffer endless or oversized inputs
// (issue 20): /dev/zero as the plan or the script, a gaffer.yaml that is
// a symbolic link to /dev/zero, a plan over 1 MiB on a file and on a pipe.
// Each is refused in one line with its documented exit code, within the
// memory limit, and a non-regular file is never read.
func TestInputsAreReadThroughABound(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	big := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(big, []byte("### Task 1: x\n"+strings.Repeat("a", 2<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	device := "/dev/zero: is a character device, not a regular file"
	for _, c := range []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"plan validate /dev/zero", "", []string{"plan", "validate", "/dev/zero"}, ExitUsage, device},
		{"run --plan /dev/zero", "", []string{"--repo", dir, "run", "--plan", "/dev/zero", "--script", script}, ExitUsage, device},
		{"run --script /dev/zero", "", []string{"--repo", dir, "run", "--plan", plan, "--script", "/dev/zero"}, ExitUsage, device},
		{"plan over 1 MiB", "", []string{"plan", "validate", big}, ExitInvalid, "over the limit of 1048576 (1 MiB)"},
		{"plan over 1 MiB on a pipe", big, []string{"plan", "validate", "/dev/stdin"}, ExitInvalid, "over the limit of 1048576 (1 MiB)"},
	} {
		out, code := gafferLimited(t, bin, c.stdin, c.args...)
		if code != c.code || !strings.Contains(out, c.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: exit %d, want %d and one line with %q:\n%s", c.name, code, c.code, c.want, out)
		}
	}

	// A repository whose gaffer.yaml is a symbolic link to /dev/zero.
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "gaffer.yaml")); err != nil {
		t.Fatal(err)
	}
	out, code := gafferLimited(t, bin, "", "--repo", dir, "config", "show")
	if code != ExitInvalid || !strings.Contains(out, "gaffer.yaml: is a character device, not a regular file") {
		t.Errorf("gaffer.yaml -> /dev/zero: exit %d, want %d naming it:\n%s", code, ExitInvalid, out)
	}
}

// TestRepoThatIsAFile: --repo naming a file is not a git repository (exit
// 8), not an invalid configuration (it was exit 3: "config: stat
// FILE/gaffer.yaml: not a directory").
func TestRepoThatIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, plan, script := demoRepo(t)
	for _, args := range [][]string{{"run", "--plan", plan, "--script", script}, {"run", "--goal", "g", "--script", script}, {"status"}} {
		out, code := gaffer(t, append([]string{"--repo", file}, args...)...)
		if code != ExitPrecondition || !strings.Contains(out, "not a git repository") {
			t.Errorf("--repo FILE %s: exit %d, want %d (not a git repository):\n%s", args[0], code, ExitPrecondition, out)
		}
	}
}
