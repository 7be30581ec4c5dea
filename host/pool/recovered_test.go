package pool

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/serve"
)

// A serve killed between a run's last checkpoint and its journal's write
// leaves the finished run's job in the journal. The next serve takes the
// job as done: no "run failed", no error kept for the run.
func TestPoolRecoveredJobOfAFinishedRunIsDone(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	first := newTestPool(t, h)
	startPool(t, first)
	spec := host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, InPlace: true, AutoApprove: true}
	if _, err := first.Submit(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, first, first, "r-1", "completed")
	first.Queue().Drain(time.Minute)

	// The journal as the killed serve left it: r-1 still executing.
	key, err := host.RepoKey(f.Repo)
	if err != nil {
		t.Fatal(err)
	}
	spec.Repo = key
	b, err := encodeJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(map[string]any{"version": 1, "active": []serve.Job{{RunID: "r-1", Kind: serve.JobStart, Spec: b, Key: key, Group: key}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(serve.JournalPath(f.Store), j, 0o600); err != nil {
		t.Fatal(err)
	}
	next := newTestPool(t, h)
	if q := next.Queue().Status().Queued; len(q) != 1 || !q[0].Recovered {
		t.Fatalf("the journal's job was not recovered: %+v", q)
	}
	startPool(t, next)
	deadline := time.Now().Add(pollDeadline)
	for st := next.Queue().Status(); len(st.Queued)+len(st.Active) > 0; st = next.Queue().Status() {
		if time.Now().After(deadline) {
			t.Fatalf("the recovered job never ended: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if msg := next.Queue().LastError("r-1"); msg != "" {
		t.Errorf("the recovered job of the finished run failed: %s", msg)
	}
	if rs, err := next.Status(t.Context(), host.RunRequest{RunID: "r-1"}); err != nil || rs.Status != "completed" {
		t.Errorf("status %q, %v; want completed", rs.Status, err)
	}
}

// Approving a run that is queued (submitted, no checkpoint yet) says so,
// as its status does, instead of that there is no such run.
func TestPoolAnswerOfAQueuedRun(t *testing.T) {
	poolServices(t, func(t *testing.T, f hosttest.Fixture, p *Pool, svc host.Service) {
		if _, err := svc.Submit(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, InPlace: true}); err != nil {
			t.Fatal(err)
		}
		_, err := svc.Answer(t.Context(), host.AnswerRequest{RunID: "r-1", Verdict: host.Approve})
		if host.CodeOf(err) != host.Refused || err == nil || err.Error() != "run r-1 is not waiting for approval (it is queued)" {
			t.Fatalf("Answer of a queued run: %v (%s)", err, host.CodeOf(err))
		}
	})
}
