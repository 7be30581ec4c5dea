package badger

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// startHelper starts this test binary running only the helper test name,
// with the variable env set to dir (the store the helper writes in), and
// returns the process, its standard output to read as it goes, and its
// standard error as gathered so far.
func startHelper(t *testing.T, name, env, dir string) (*exec.Cmd, io.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+dir)
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// writeFile writes data to path, as a killed process left it.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantLatest opens the store in dir, after what happened to it, and wants
// run r's latest checkpoint to be seq.
func wantLatest(t *testing.T, dir string, seq uint64, after string) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open after %s: %v", after, err)
	}
	defer s.Close()
	if cp, err := s.Latest(bg, "r"); err != nil || cp.Seq != seq {
		t.Errorf("latest = %d, %v; want the %d checkpoints written before", cp.Seq, err, seq)
	}
}
