package cli

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeKeepsRunsOnAFullStoreDisk runs serve with its store on a small
// tmpfs, submits three runs and fills the disk while the first executes.
// serve used to take the queued runs one after the other, fail each at
// once on the full disk and forget it (logged, never created, gone from
// the queue), while /readyz still said ok. The runs must stay queued,
// /readyz must say why serve is not ready, and once the disk has room
// serve must complete all three without a command.
func TestServeKeepsRunsOnAFullStoreDisk(t *testing.T) {
	// Not parallel: it must see the first run (--pace 200ms) running
	// before the runs end; beside the soak it missed it.
	bin := gafferBinary(t)
	disk := tmpfs(t, "64m")
	bin = binWithEnv(t, bin, "GAFFER_STORE="+filepath.Join(disk, "store"))
	repo, aux := t.TempDir(), t.TempDir()
	gitRepo(t, repo, map[string]string{"README.md": "small\n"})
	plan, script := filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
	writeTestFile(t, plan, "# Plan: two\n\n### Task 1: a\n\nDo a.\n\n### Task 2: b\n\nDo b.\n")
	writeTestFile(t, script, "developer: []\nreviewer: []\n")
	s := startServe(t, bin, repo, "--workers", "2")
	defer s.stop(syscall.SIGTERM)

	ids := []string{"r-20260101-fullq1", "r-20260101-fullq2", "r-20260101-fullq3"}
	for _, id := range ids {
		if out, code := gafferCmd(t, bin, "--repo", repo, "submit", "--in-place", "--plan", plan, "--script", script, "--auto-approve",
			"--pace", "200ms", "--run-id", id); code != 0 {
			t.Fatalf("submit %s: exit %d\n%s", id, code, out)
		}
	}
	// Fill the disk once the first run has a checkpoint, and wait until
	// serve has met the full disk.
	waitServe(t, s, "the first run's first checkpoint", func() bool {
		v, _ := statusOf(t, bin, repo, ids[0])
		return v.Status == "running"
	})
	free := fillDisk(t, disk)
	waitServe(t, s, "serve meeting the full disk", func() bool { return strings.Contains(s.output(), "no space left on device") })
	time.Sleep(time.Second) // serve's workers would now be dropping the queued runs
	for _, id := range ids[1:] {
		out, code := gafferCmd(t, bin, "--repo", repo, "status", id)
		if code != 0 || !strings.Contains(out, "queued") {
			t.Errorf("%s on a full store disk: exit %d, want it still queued:\n%s", id, code, out)
		}
	}
	if code, body := readyz(t, s); code != http.StatusServiceUnavailable || !strings.Contains(body, "no space left on device") {
		t.Errorf("/readyz on a full store disk: %d %q, want 503 saying the disk is full", code, body)
	}
	free()
	for _, id := range ids {
		waitStatus(t, bin, repo, id, "completed", s)
	}
	if code, body := readyz(t, s); code != http.StatusOK {
		t.Errorf("/readyz once the runs completed: %d %q, want 200", code, body)
	}
}

// readyz returns serve's /readyz status code and body.
func readyz(t *testing.T, s *server) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + s.metrics + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitServe polls cond until it holds, for at most a minute.
func waitServe(t *testing.T, s *server, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s\nserve:\n%s", what, s.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
