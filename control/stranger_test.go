package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const strangerEnv = "GAFFER_CONTROL_STRANGER_SOCKET"

// stranger is the test binary run as another user: it listens on path,
// opens the socket to everyone, as a spoofer would, and appends every
// request it gets to path.got.
func stranger(path string) int {
	mux := NewMux()
	mux.Handle("approve", func(_ context.Context, args json.RawMessage) (any, error) {
		f, err := os.OpenFile(path+".got", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err == nil {
			fmt.Fprintf(f, "approve %s\n", args)
			f.Close()
		}
		return map[string]string{"message": "approved by a stranger"}, nil
	})
	srv, err := Listen(Config{Path: path, Mux: mux, Info: Info{Kind: "stranger"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := os.Chmod(path, 0o666); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println("ready")
	_ = srv.Serve(context.Background())
	return 0
}

// nobody is the uid and gid the stranger runs as.
const nobody = 65534

// openTo makes dir and every parent up to the temporary directory
// enterable by everyone, and dir writable by everyone.
func openTo(t *testing.T, dir string) {
	t.Helper()
	for d := dir; strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}

// TestClientRefusesAStranger runs a listener as another user (nobody) and
// sends it an approval with feedback: the client must refuse it, in one
// line, before sending anything.
func TestClientRefusesAStranger(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running a listener as another user needs root (setuid in the child); this test runs as uid", os.Getuid())
	}
	dir := shortDir(t)
	openTo(t, dir)
	bin := filepath.Join(dir, "control.test")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "gaffer.sock")
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), strangerEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run a process as uid %d: %v", nobody, err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("the stranger did not start: %q %v", buf, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Fatalf("the stranger's socket: %v %v", fi, err)
	}

	var res map[string]string
	err = (&Client{Path: path}).Call(context.Background(), "approve", map[string]string{"feedback": "ship it"}, &res)
	if err == nil {
		t.Fatalf("the client sent an approval to a listener of uid %d, which answered %v", nobody, res)
	}
	if !errors.Is(err, ErrStranger) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q, want one line matching ErrStranger", err)
	}
	if b, err := os.ReadFile(path + ".got"); err == nil {
		t.Errorf("the stranger received: %s", b)
	}
}

// TestPrivateDirIsChecked points XDG_RUNTIME_DIR at a fresh directory and
// checks the socket directory of a deep store: made 0700 with umask 000,
// and refused when it is a symbolic link, open to others, or another
// user's.
func TestPrivateDirIsChecked(t *testing.T) {
	xdg := shortDir(t)
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	deep := filepath.Join(shortDir(t), strings.Repeat("d", 60), strings.Repeat("e", 60), ".git", "gaffer")
	p := SocketPath(deep)
	if filepath.Dir(p) != filepath.Join(xdg, "gaffer") {
		t.Fatalf("SocketPath(deep) = %s, want it in %s/gaffer", p, xdg)
	}
	old := syscall.Umask(0)
	_, stop := startServer(t, p, testMux())
	syscall.Umask(old)
	if fi, err := os.Lstat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Errorf("socket directory %v, %v; want a 0700 directory", fi, err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %v, %v; want mode 0600", fi, err)
	}
	if _, err := NewClient(deep).Ping(context.Background()); err != nil {
		t.Fatalf("ping through the private directory: %v", err)
	}
	stop()

	priv := filepath.Join(xdg, "gaffer")
	other := shortDir(t)
	for _, c := range []struct {
		name  string
		setup func() error
	}{
		{"a symbolic link", func() error {
			if err := os.RemoveAll(priv); err != nil {
				return err
			}
			return os.Symlink(other, priv)
		}},
		{"open to others", func() error {
			if err := os.RemoveAll(priv); err != nil {
				return err
			}
			if err := os.Mkdir(priv, 0o700); err != nil {
				return err
			}
			return os.Chmod(priv, 0o777)
		}},
		{"another user's", func() error {
			if err := os.Chmod(priv, 0o700); err != nil {
				return err
			}
			return os.Chown(priv, nobody, nobody)
		}},
	} {
		if err := c.setup(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := Listen(Config{Path: p, Mux: testMux()}); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("%s: Listen: %v, want ErrUnsafeDir", c.name, err)
		}
		if _, err := NewClient(deep).Ping(context.Background()); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("%s: Ping: %v, want ErrUnsafeDir", c.name, err)
		}
	}
}
