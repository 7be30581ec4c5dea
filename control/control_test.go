package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// shortDir returns a temporary directory with a path short enough for a
// unix socket.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type echoArgs struct {
	RunID string `json:"run_id"`
}

type codeErr struct{ code int }

func (e codeErr) Error() string { return fmt.Sprintf("failed with %d", e.code) }
func (e codeErr) ExitCode() int { return e.code }

func startServer(t *testing.T, path string, mux *Mux) (*Server, func()) {
	t.Helper()
	// The write of the 40 MB answer waits for the client's decoding;
	// a loaded machine must not turn that into a timeout.
	srv, err := Listen(Config{Path: path, Mux: mux, Info: Info{Kind: "serve", Store: "/s"}, ReadTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	return srv, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

func testMux() *Mux {
	mux := NewMux()
	mux.Handle("echo", func(_ context.Context, args json.RawMessage) (any, error) {
		var a echoArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return map[string]string{"run_id": a.RunID, "status": "running"}, nil
	})
	mux.Handle("big", func(context.Context, json.RawMessage) (any, error) {
		return strings.Repeat("x", 40<<20), nil // a listing of many runs
	})
	mux.Handle("fail", func(context.Context, json.RawMessage) (any, error) {
		return nil, fmt.Errorf("run x: %w", codeErr{7})
	})
	mux.Handle("panic", func(context.Context, json.RawMessage) (any, error) {
		var m map[string]int
		//lint:ignore SA5000 the handler panics on purpose: the server must survive it
		m["x"]++
		return nil, nil
	})
	return mux
}

func TestCallRoundTrip(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "gaffer"))
	if !strings.HasSuffix(path, "gaffer.sock") {
		t.Fatalf("SocketPath = %s", path)
	}
	_, stop := startServer(t, path, testMux())
	defer stop()

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("leftovers beside the socket: %v", entries)
	}
	c := &Client{Path: path}
	var got map[string]string
	if err := c.Call(context.Background(), "echo", echoArgs{RunID: "r-1"}, &got); err != nil {
		t.Fatal(err)
	}
	if got["run_id"] != "r-1" || got["status"] != "running" {
		t.Errorf("echo = %v", got)
	}
	info, err := c.Ping(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != os.Getpid() || info.Kind != "serve" || info.Store != "/s" {
		t.Errorf("ping = %+v", info)
	}

	// A response may be larger than a request may be. Decoding 40 MB
	// under -race on a loaded machine can pass the default 30 s bound,
	// which is not what this checks.
	var big string
	slow := &Client{Path: path, Timeout: 10 * time.Minute}
	if err := slow.Call(context.Background(), "big", nil, &big); err != nil || len(big) != 40<<20 {
		t.Errorf("a 40 MB response: %d bytes, %v", len(big), err)
	}

	err = c.Call(context.Background(), "fail", nil, nil)
	var re *RemoteError
	if !errors.As(err, &re) || re.Exit != 7 || !strings.Contains(re.Msg, "run x: failed with 7") {
		t.Errorf("fail: %v (%#v), want a RemoteError with exit 7", err, re)
	}
	if err := c.Call(context.Background(), "nope", nil, nil); !errors.Is(err, ErrUnknownOp) {
		t.Errorf("unknown op: %v, want ErrUnknownOp", err)
	}
	if err := c.Call(context.Background(), "panic", nil, nil); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("panic: %v", err)
	}
	// The server survived the panic.
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping after panic: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "g"))
	_, stop := startServer(t, path, testMux())
	defer stop()
	c := &Client{Path: path}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got map[string]string
			id := fmt.Sprintf("r-%d", i)
			if err := c.Call(context.Background(), "echo", echoArgs{RunID: id}, &got); err != nil {
				errs <- err
			} else if got["run_id"] != id {
				errs <- fmt.Errorf("got %v for %s", got, id)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNoServer(t *testing.T) {
	c := NewClient(filepath.Join(shortDir(t), "gaffer"))
	if err := c.Call(context.Background(), "echo", nil, nil); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Call without a server: %v, want ErrNoServer", err)
	}
}

func TestServeStopsAndRemovesSocket(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "g"))
	_, stop := startServer(t, path, testMux())
	stop()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket still there after Serve returned: %v", err)
	}
	if _, err := (&Client{Path: path}).Ping(context.Background()); !errors.Is(err, ErrNoServer) {
		t.Fatalf("ping after stop: %v, want ErrNoServer", err)
	}
}

func TestListenRefusesLiveSocket(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "g"))
	_, stop := startServer(t, path, testMux())
	defer stop()
	if _, err := Listen(Config{Path: path}); !errors.Is(err, ErrInUse) {
		t.Fatalf("second Listen: %v, want ErrInUse", err)
	}
	if _, err := (&Client{Path: path}).Ping(context.Background()); err != nil {
		t.Fatalf("the first server stopped answering: %v", err)
	}
}

func TestListenKeepsOtherFiles(t *testing.T) {
	path := filepath.Join(shortDir(t), "g.sock")
	if err := os.WriteFile(path, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(Config{Path: path}); !errors.Is(err, ErrNotSocket) {
		t.Fatalf("Listen over a regular file: %v, want ErrNotSocket", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Fatal("the file was changed")
	}
}

func TestPathTooLong(t *testing.T) {
	path := "/tmp/" + strings.Repeat("x", 200) + ".sock"
	if _, err := Listen(Config{Path: path}); !errors.Is(err, ErrPathTooLong) {
		t.Fatalf("Listen: %v, want ErrPathTooLong", err)
	}
	if err := (&Client{Path: path}).Call(context.Background(), "x", nil, nil); !errors.Is(err, ErrPathTooLong) {
		t.Fatalf("Call: %v, want ErrPathTooLong", err)
	}
}

func TestStaleSocketInProcess(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "g"))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("want a stale socket file: %v", err)
	}
	c := &Client{Path: path}
	if _, err := c.Ping(context.Background()); !errors.Is(err, ErrNoServer) {
		t.Fatalf("ping on a stale socket: %v, want ErrNoServer", err)
	}
	_, stop := startServer(t, path, testMux())
	defer stop()
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping after Listen replaced the stale socket: %v", err)
	}
}

const helperEnv = "GAFFER_CONTROL_HELPER_SOCKET"

// TestMain lets the test binary act as a process that holds a socket until
// it is killed.
func TestMain(m *testing.M) {
	if path := os.Getenv(strangerEnv); path != "" {
		os.Exit(stranger(path))
	}
	if path := os.Getenv(helperEnv); path != "" {
		srv, err := Listen(Config{Path: path, Mux: testMux(), Info: Info{Kind: "helper"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println("ready")
		_ = srv.Serve(context.Background())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStaleSocketAfterKill9(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "g"))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("helper did not start: %q %v", buf, err)
	}
	c := &Client{Path: path}
	info, err := c.Ping(context.Background())
	if err != nil || info.Kind != "helper" || info.PID != cmd.Process.Pid {
		t.Fatalf("ping helper = %+v, %v", info, err)
	}
	if _, err := Listen(Config{Path: path}); !errors.Is(err, ErrInUse) {
		t.Fatalf("Listen while the helper lives: %v, want ErrInUse", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("want the killed helper's socket left behind: %v", err)
	}
	if _, err := c.Ping(context.Background()); !errors.Is(err, ErrNoServer) {
		t.Fatalf("ping after kill -9: %v, want ErrNoServer", err)
	}
	removed, err := RemoveStale(path)
	if err != nil || !removed {
		t.Fatalf("RemoveStale = %v, %v; want true", removed, err)
	}
	_, stop := startServer(t, path, testMux())
	defer stop()
	var got map[string]string
	if err := c.Call(context.Background(), "echo", echoArgs{RunID: "after"}, &got); err != nil || got["run_id"] != "after" {
		t.Fatalf("echo on the new server = %v, %v", got, err)
	}
}

func TestMalformedRequest(t *testing.T) {
	path := SocketPath(filepath.Join(shortDir(t), "g"))
	_, stop := startServer(t, path, testMux())
	defer stop()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, "{not json")
	var resp Response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		t.Fatal(err)
	}
	if resp.OK || !strings.Contains(resp.Error, "protocol error") {
		t.Fatalf("response = %+v", resp)
	}
}

func TestSocketPathOfADeepStore(t *testing.T) {
	deep := filepath.Join(shortDir(t), strings.Repeat("d", 60), strings.Repeat("e", 60), ".git", "gaffer")
	p := SocketPath(deep)
	if len(p) > MaxPathLen || strings.HasPrefix(p, deep) {
		t.Fatalf("SocketPath(deep) = %s", p)
	}
	if p != SocketPath(deep+"/") {
		t.Fatalf("SocketPath is not stable: %s vs %s", p, SocketPath(deep+"/"))
	}
	_, stop := startServer(t, p, testMux())
	defer stop()
	if _, err := NewClient(deep).Ping(context.Background()); err != nil {
		t.Fatalf("ping through the derived path: %v", err)
	}
}

func TestListenAtTheLongestPath(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, strings.Repeat("x", MaxPathLen-len(dir)-1))
	if len(path) != MaxPathLen {
		t.Fatalf("path of %d bytes", len(path))
	}
	_, stop := startServer(t, path, testMux())
	defer stop()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v; want mode 0600", fi, err)
	}
	if _, err := (&Client{Path: path}).Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("leftovers beside the socket: %v", entries)
	}
}

// mustPanic calls f and returns what it panicked with, failing the test if
// it returned normally.
func mustPanic(t *testing.T, what string, f func()) (v any) {
	t.Helper()
	defer func() {
		v = recover()
		if v == nil {
			t.Errorf("%s: did not panic", what)
		}
	}()
	f()
	return nil
}

// A second registration of an operation panics, as net/http.ServeMux does,
// and leaves the first handler in place: the server still answers with it.
func TestHandleTwicePanics(t *testing.T) {
	mux := testMux()
	second := func(context.Context, json.RawMessage) (any, error) { return "second", nil }
	v := mustPanic(t, "duplicate echo", func() { mux.Handle("echo", second) })
	if msg, _ := v.(string); !strings.Contains(msg, `echo registered twice`) {
		t.Errorf("panic value = %v, want it to name the operation", v)
	}
	mustPanic(t, "empty op", func() { mux.Handle("", second) })
	mustPanic(t, "nil handler", func() { mux.Handle("other", nil) })
	if len(mux.Ops()) != 4 {
		t.Errorf("ops = %v, want the four of testMux", mux.Ops())
	}

	path := SocketPath(filepath.Join(shortDir(t), "gaffer"))
	_, stop := startServer(t, path, mux)
	defer stop()
	var got map[string]string
	if err := (&Client{Path: path}).Call(context.Background(), "echo", echoArgs{RunID: "r-2"}, &got); err != nil {
		t.Fatal(err)
	}
	if got["run_id"] != "r-2" {
		t.Errorf("echo after a refused registration = %v, want the first handler's answer", got)
	}
}
