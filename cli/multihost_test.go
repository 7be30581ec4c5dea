package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/internal/otlprecv"
	"github.com/gaffer-dev/gaffer/profile"
)

// TestServeTwoHostsTakeOver runs two `gaffer serve` processes with
// different host ids on one database and one repository (its work tree
// in place: the serves take turns on it, its lock keeping them apart).
// Serve a is SIGKILLed after a commit of its run, before the checkpoint;
// serve b takes the run over once a's lease expires and finishes it, and
// the runs queued meanwhile. status, approve and cancel come from other
// processes, with no socket: through the database. A run taken over more
// than 5 times fails, naming its last holder.
func TestServeTwoHostsTakeOver(t *testing.T) {
	// Not parallel: beside the others, its cancel of r-3 once answered
	// exit 8, "run r-3 has already finished: cancelled" (the cancel raced
	// its own effect); alone it has not.
	bin := gafferBinary(t)
	url := pgtest.URL(t)
	dir, _, script := demoRepo(t)
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	// Every process traces to a real OTLP receiver: the runs' roots,
	// ended by b, link to their submitters' spans (the jobs' rows kept
	// the trace context through the takeover and the answer).
	recv, err := otlprecv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	bin = binWithEnv(t, bin, "GAFFER_STORE="+url, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.Endpoint(), "OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=")
	a := startServeEnv(t, bin, dir, []string{"GAFFER_TEST_PAUSE_AFTER_COMMIT=60s"}, "--host-id", "a", "--queue-lease", "2s")
	submit := func(id string, extra ...string) {
		t.Helper()
		args := append([]string{"--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", id}, extra...)
		out, code := gafferCmd(t, bin, args...)
		if code != 0 || !strings.Contains(out, id+" queued") {
			t.Fatalf("submit %s: exit %d\n%s", id, code, out)
		}
	}
	submit("r-1", "--auto-approve")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(a.output(), "gaffer-test: committed") {
		if time.Now().After(deadline) {
			t.Fatalf("serve a made no commit:\n%s", a.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// b does not pause
	b := startServe(t, bin, dir, "--host-id", "b", "--queue-lease", "2s")
	submit("r-2") // waits for the plan's approval
	if _, err := os.Lstat(filepath.Join(dir, ".git", "gaffer", "hosts", "b.sock")); err != nil {
		t.Fatalf("serve b's socket: %v", err)
	}
	a.stop(syscall.SIGKILL)

	// No socket answers at .git/gaffer.sock: status reads the database.
	v := waitStatus(t, bin, dir, "r-1", "completed", b)
	if len(v.Phases) == 0 {
		t.Fatalf("r-1: no phases: %+v", v)
	}
	if !strings.Contains(b.output(), `"recovered":true`) {
		t.Errorf("serve b did not take r-1 over (recovered):\n%s", b.output())
	}
	waitStatus(t, bin, dir, "r-2", "awaiting_approval", b)
	out, code := gafferCmd(t, bin, "--repo", dir, "approve", "r-2")
	if code != 0 || !strings.Contains(out, "approved") || !strings.Contains(out, "a gaffer serve of the database store continues it") {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, "r-2", "completed", b)
	checkLinked(t, recv, "r-1", "r-2")

	// A cancel from a third process reaches the run where b executes it.
	submit("r-3", "--auto-approve", "--pace", "2s")
	waitStatus(t, bin, dir, "r-3", "running", b)
	out, code = gafferCmd(t, bin, "--repo", dir, "cancel", "r-3")
	if code != 0 {
		t.Fatalf("cancel: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, "r-3", "cancelled", b)
	// A run whose holders keep dying is taken over at most 5 times: the
	// 6th takeover fails it, naming its last holder.
	submit("r-4")
	waitStatus(t, bin, dir, "r-4", "awaiting_approval", b)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `UPDATE gaffer.jobs SET state = 'running', claimed_by = 'ghost',
		lease_until = now() - interval '1 second', takeovers = 5 WHERE run_id = 'r-4'`); err != nil {
		t.Fatal(err)
	}
	v = waitStatus(t, bin, dir, "r-4", "failed", b)
	if want := "run r-4 failed: taken over 6 times (at most 5), the last time from host ghost"; !slices.Contains(v.Errors, want) {
		t.Fatalf("r-4's errors %q lack %q", v.Errors, want)
	}
	list, code := gafferCmd(t, bin, "--repo", dir, "list")
	if code != 0 || !strings.Contains(list, "r-1") || !strings.Contains(list, "r-3") {
		t.Fatalf("list: exit %d\n%s", code, list)
	}
	hist, code := gafferCmd(t, bin, "--repo", dir, "history", "r-1")
	if code != 0 || hist == "" {
		t.Fatalf("history: exit %d\n%s", code, hist)
	}
	// b's /metrics reads the queue every host shares: nothing is queued
	// now, so its length and its oldest job's age are 0. It counts the
	// database's runs, every host's (r-1 began on a): 2 completed, 1
	// cancelled, 1 failed, none awaiting approval.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		body := scrape(t, b.metrics)
		if strings.Contains(body, "\ngaffer_serve_queue_length{queue=\"shared\"} 0\n") && strings.Contains(body, "\ngaffer_serve_queue_oldest_age_seconds{queue=\"shared\"} 0\n") &&
			strings.Contains(body, "\ngaffer_runs{status=\"completed\",store=\"shared\"} 2\n") && strings.Contains(body, "\ngaffer_runs{status=\"cancelled\",store=\"shared\"} 1\n") &&
			strings.Contains(body, "\ngaffer_runs{status=\"failed\",store=\"shared\"} 1\n") && strings.Contains(body, "\ngaffer_pending_approvals{store=\"shared\"} 0\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve b's queue and runs gauges:\n%s", grepLines(body, "gaffer_serve")+grepLines(body, "gaffer_runs")+grepLines(body, "gaffer_pending"))
		}
	}
	if code := b.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve b exit %d after SIGTERM\n%s", code, b.output())
	}
}

// checkLinked waits for the root spans of runs ids, each linked to the
// span of the `gaffer submit` that queued it.
func checkLinked(t *testing.T, recv *otlprecv.Receiver, ids ...string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		submits, roots := map[string]otlprecv.Span{}, map[string]otlprecv.Span{}
		for _, sp := range recv.Spans() {
			id := fmt.Sprint(sp.Attrs["gaffer.run_id"])
			switch sp.Name {
			case "gaffer submit":
				submits[id] = sp
			case "gaffer run":
				roots[id] = sp
			}
		}
		missing := ""
		for _, id := range ids {
			sub, r := submits[id], roots[id]
			if sub.SpanID == "" || r.SpanID == "" || len(r.Links) != 1 || r.Links[0].SpanID != sub.SpanID || r.Links[0].TraceID != sub.TraceID {
				missing += fmt.Sprintf("\n%s: submit %s/%s, root links %+v", id, sub.TraceID, sub.SpanID, r.Links)
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs not linked to their submitters:%s", missing)
		}
	}
}
