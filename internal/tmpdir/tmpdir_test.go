package tmpdir

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestMain makes the test binary, run with GAFFER_TMPDIR_OWNER set, a
// process that makes a directory, prints its path and waits on stdin: the
// owner a test kills.
func TestMain(m *testing.M) {
	if os.Getenv("GAFFER_TMPDIR_OWNER") != "" {
		d, err := Make("cmd")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(d.Path)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// owner starts a process that makes a directory in tmp and holds it, and
// returns the process and the directory.
func owner(t *testing.T, tmp string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GAFFER_TMPDIR_OWNER=1", "TMPDIR="+tmp)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, tmp) {
		t.Fatalf("owner said %q (%v)", line, err)
	}
	return cmd, strings.TrimSpace(line)
}

func TestMakeNamesTheOwnerAndRemoveRemoves(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	d, err := Make("caches")
	if err != nil {
		t.Fatal(err)
	}
	m := name.FindStringSubmatch(filepath.Base(d.Path))
	if filepath.Dir(d.Path) != tmp || m == nil || m[1] != "caches" || m[2] != fmt.Sprint(os.Getpid()) {
		t.Fatalf("made %s, want gaffer-caches-p%d-s…-N in %s", d.Path, os.Getpid(), tmp)
	}
	if fi, err := os.Stat(d.Path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("stat %s: %v, %v", d.Path, fi, err)
	}
	// What a session leaves read-only goes too.
	ro := filepath.Join(d.Path, "gomod", "x")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(ro), 0o555); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	if _, err := os.Lstat(d.Path); !os.IsNotExist(err) {
		t.Fatalf("%s after Remove: %v", d.Path, err)
	}
}

func TestSweepRemovesAKilledOwnersDirectoryOnly(t *testing.T) {
	tmp := t.TempDir()
	live, liveDir := owner(t, tmp)
	killed, killedDir := owner(t, tmp)
	if err := os.WriteFile(filepath.Join(killedDir, "big"), make([]byte, 1<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Sweep(tmp)
	if err != nil || len(got) != 0 {
		t.Fatalf("Sweep with both owners alive removed %v (%v)", got, err)
	}
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	got, err = Sweep(tmp)
	if err != nil || !slices.Equal(got, []string{killedDir}) {
		t.Fatalf("Sweep after the kill removed %v (%v), want [%s]", got, err, killedDir)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Fatalf("the live owner's directory: %v", err)
	}
	if _, err := os.Lstat(killedDir); !os.IsNotExist(err) {
		t.Fatalf("the killed owner's directory: %v", err)
	}
	_ = live
}

// A directory whose lock is held is kept though its pid is gone: its
// owner may be a process of another PID namespace sharing the directory.
func TestSweepKeepsALockedDirectoryOfAGonePid(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true:", err)
	}
	gone := cmd.Process.Pid
	dir := filepath.Join(tmp, fmt.Sprintf("gaffer-cmd-p%d-s1-7", gone))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, ownerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil {
		t.Fatal(err)
	}
	if got, err := Sweep(tmp); err != nil || len(got) != 0 {
		t.Fatalf("Sweep removed %v (%v), want nothing while the lock is held", got, err)
	}
	f.Close()
	if got, err := Sweep(tmp); err != nil || !slices.Equal(got, []string{dir}) {
		t.Fatalf("Sweep removed %v (%v), want [%s] once the lock is free", got, err, dir)
	}
}

func TestSweepLeavesWhatIsNotAGoneOwnersDirectory(t *testing.T) {
	tmp := t.TempDir()
	self := os.Getpid()
	start, _ := startTime(self)
	target := t.TempDir()
	keep := map[string]func(string) error{
		// This process's, made before its owner file: alive.
		fmt.Sprintf("gaffer-cmd-p%d-s%d-1", self, start): mkdir,
		// Not of Make's form.
		"gaffer-cmd-123": mkdir, "gaffer-caches-p1-sx-1": mkdir, "gaffer-ops-bin": mkdir,
		// A link, never followed.
		"gaffer-cmd-p999999999-s1-2": func(p string) error { return os.Symlink(target, p) },
		// A file.
		"gaffer-cmd-p999999999-s1-3": func(p string) error { return os.WriteFile(p, nil, 0o600) },
	}
	if os.Getuid() == 0 {
		// Another user's.
		keep["gaffer-cmd-p999999999-s1-4"] = func(p string) error {
			if err := mkdir(p); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}
	}
	for n, make := range keep {
		if err := make(filepath.Join(tmp, n)); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	if runtime.GOOS == "linux" {
		// This pid, but another start time: a reused pid's.
		reused := filepath.Join(tmp, fmt.Sprintf("gaffer-cli-p%d-s%d-5", self, start+1))
		if err := mkdir(reused); err != nil {
			t.Fatal(err)
		}
		want = append(want, reused)
	}
	got, err := Sweep(tmp)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Sweep removed %v (%v), want %v", got, err, want)
	}
	for n := range keep {
		if _, err := os.Lstat(filepath.Join(tmp, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the link's target: %v", err)
	}
}

func mkdir(p string) error { return os.Mkdir(p, 0o700) }
