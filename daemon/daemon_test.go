package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/host/socket"
)

// waitDeadline bounds every wait of these tests: generous, for a loaded
// 2-core machine.
const waitDeadline = 2 * time.Minute

// output is a file the daemon writes its lines to while the test reads
// them (String).
type output struct{ *os.File }

func outFile(t *testing.T) output {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return output{f}
}

// String is what the daemon wrote so far.
func (o output) String() string {
	b, err := os.ReadFile(o.Name())
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// waitFor polls until cond holds, failing with what at waitDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get returns url's status code and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// A daemon serves its metrics, its inbox and the control socket, executes
// a run submitted on the socket, and on its context's end drains and says
// so; the host stays open, its caller's to close.
func TestRunServesExecutesAndDrains(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	out := outFile(t)
	d, err := New(Config{Workers: 1, MetricsAddr: "127.0.0.1:0", InboxAddr: "127.0.0.1:0", DrainTimeout: time.Minute, Version: "v-test", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if d.Metrics() == nil {
		t.Fatal("Metrics() = nil before Run: the store cannot time its writes into them")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, h) }()
	waitFor(t, "the daemon to say where it serves", func() bool { return strings.Contains(out.String(), "inbox http://") })
	served := regexp.MustCompile(`metrics http://(\S+)/metrics, 1 worker\(s\)\ngaffer serve: inbox (http://\S+/)\n`).FindStringSubmatch(out.String())
	if served == nil {
		t.Fatalf("output %q: want the metrics address, 1 worker and the inbox's URL", out.String())
	}
	if code, body := get(t, "http://"+served[1]+"/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics = %d, Go collector in it: %v; want 200 with it", code, strings.Contains(body, "go_goroutines"))
	}
	if code, _ := get(t, "http://"+served[1]+"/readyz"); code != http.StatusOK {
		t.Errorf("GET /readyz = %d while serving; want 200", code)
	}
	if code, _ := get(t, served[2]); code != http.StatusOK {
		t.Errorf("GET the inbox = %d; want 200 (loopback, no token)", code)
	}

	cl, err := socket.HolderAt(ctx, f.Store)
	if err != nil || cl == nil {
		t.Fatalf("HolderAt(%s) = %v, %v; want the daemon's socket", f.Store, cl, err)
	}
	info, err := cl.Ping(ctx)
	if err != nil || info.Kind != "serve" || info.Version != "v-test" {
		t.Fatalf("Ping = %+v, %v; want kind serve, version v-test", info, err)
	}
	spec := f.Spec("r-1")
	spec.AutoApprove, spec.InPlace = true, true
	if _, err := cl.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "run r-1 to complete", func() bool {
		rs, err := cl.Status(ctx, host.RunRequest{RunID: "r-1"})
		return err == nil && rs.Status == "completed" && !rs.Pending
	})
	if _, err := os.Stat(filepath.Join(f.Repo, "bye.txt")); err != nil {
		t.Errorf("the run's last phase: %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after its context ended = %v; want nil (drained)", err)
		}
	case <-time.After(waitDeadline):
		t.Fatal("Run did not return after its context ended")
	}
	if !strings.HasSuffix(out.String(), "gaffer serve: stopped; 0 run(s) resume at the next start\n") {
		t.Errorf("output %q: want it to end with the drain's line", out.String())
	}
	if _, err := net.Dial("tcp", served[1]); err == nil {
		t.Errorf("the metrics address %s still answers after Run returned", served[1])
	}
	if _, err := h.Status(t.Context(), host.RunRequest{RunID: "r-1"}); err != nil {
		t.Errorf("the host after Run: %v; want it open (the caller closes it)", err)
	}
}

// A busy port is a ListenError naming the listener and the address, the
// cause kept: the inbox's at New, before the store opens; the metrics'
// at Run, with the host left open.
func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()

	_, err = New(Config{InboxAddr: addr})
	checkListenError(t, "New", err, InboxListener, addr)

	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	d, err := New(Config{Workers: 1, MetricsAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Run(t.Context(), h)
	checkListenError(t, "Run", err, MetricsListener, addr)
	if _, err := h.List(t.Context(), host.ListRequest{}); err != nil {
		t.Errorf("the host after Run failed: %v; want it open", err)
	}
}

// An inbox without a token listens on loopback only, whoever calls New:
// an address of all interfaces, or none, is refused before anything
// listens; with a token it is served.
func TestInboxWithoutATokenIsLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if d, err := New(Config{InboxAddr: addr}); err == nil {
			d.Close()
			t.Errorf("New with inbox %s and no token: no error, want it refused", addr)
		} else if !strings.Contains(err.Error(), "not loopback") {
			t.Errorf("New with inbox %s and no token: %v, want it refused as not loopback", addr, err)
		}
	}
	for _, cfg := range []Config{{InboxAddr: "127.0.0.1:0"}, {InboxAddr: "0.0.0.0:0", InboxToken: "t0ken"}} {
		d, err := New(cfg)
		if err != nil {
			t.Fatalf("New with inbox %s, token %q: %v", cfg.InboxAddr, cfg.InboxToken, err)
		}
		d.Close()
	}
}

func checkListenError(t *testing.T, call string, err error, listener, addr string) {
	t.Helper()
	var le *ListenError
	if !errors.As(err, &le) || le.Listener != listener || le.Addr != addr || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("%s on busy %s = %v; want a %s ListenError at it, EADDRINUSE", call, addr, err, listener)
	}
}
