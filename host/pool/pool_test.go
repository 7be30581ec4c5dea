package pool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/serve"
)

// pollDeadline bounds how long a test waits for the pool's workers; it is
// a bound against a hang, not an assertion on how fast they are.
const pollDeadline = 2 * time.Minute

// newTestPool makes the Pool of h as serve does (its Observe subscribed,
// so a drain stops runs at their checkpoints), one worker, without
// starting it. The pool is drained at the test's end, before h closes.
func newTestPool(t *testing.T, h *host.Host) *Pool {
	t.Helper()
	return newTestPoolOf(t, h, Config{Workers: 1})
}

// newTestPoolOf is newTestPool with the pool's configuration cfg.
func newTestPoolOf(t *testing.T, h *host.Host, cfg Config) *Pool {
	t.Helper()
	p, err := New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	unsubscribe := h.Subscribe(p.Queue().Observe)
	t.Cleanup(func() {
		p.Queue().Drain(time.Minute)
		unsubscribe()
	})
	return p
}

// startPool starts p's workers under a context of their own (serve's
// runs are not cut off by the caller's); the cleanup of newTestPool
// drains them, and then the context ends.
func startPool(t *testing.T, p *Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // runs after the drain (cleanups run last first)
	if err := p.Queue().Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// poolServices runs test with a fixture's Pool as the Service, and again
// with a Client reaching that Pool through the control socket its Host
// serves as "serve": one set of assertions for both.
func poolServices(t *testing.T, test func(t *testing.T, f hosttest.Fixture, p *Pool, svc host.Service)) {
	t.Run("local", func(t *testing.T) {
		f := hosttest.New(t)
		p := newTestPool(t, f.Open(t, host.Config{}))
		test(t, f, p, p)
	})
	t.Run("socket", func(t *testing.T) {
		f := hosttest.New(t)
		h := f.Open(t, host.Config{})
		p := newTestPool(t, h)
		if _, _, err := socket.Listen(t.Context(), h, p, control.Info{Kind: "serve"}); err != nil {
			t.Fatal(err)
		}
		test(t, f, p, socket.NewClient(f.Store))
	})
}

// waitStatus polls svc until run id's status is want, failing at once
// when p's job of the run failed, or at pollDeadline with the last status
// it saw.
func waitStatus(t *testing.T, p *Pool, svc host.Service, id, want string) host.RunStatus {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for {
		rs, err := svc.Status(t.Context(), host.RunRequest{RunID: id})
		if err == nil && rs.Status == want && !rs.Pending {
			return rs
		}
		if msg := p.Queue().LastError(id); msg != "" {
			t.Fatalf("run %s's job failed: %s (status %q)", id, msg, rs.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never became %s: last status %q pending=%v, %v", id, want, rs.Status, rs.Pending, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkCommitted checks that run id's files are in the work tree and that
// its phases were committed (commits with its Gaffer-Run trailer).
func checkCommitted(t *testing.T, f hosttest.Fixture, h *host.Host, id string) {
	t.Helper()
	for _, name := range []string{"hello.txt", "bye.txt"} {
		if _, err := os.Stat(filepath.Join(f.Repo, name)); err != nil {
			t.Errorf("run %s's %s: %v", id, name, err)
		}
	}
	log, err := h.Repo().Log(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range log {
		for _, tr := range c.Trailers {
			if tr.Key == nodes.TrailerRun && tr.Value == id {
				n++
				break
			}
		}
	}
	if n < 2 {
		t.Errorf("run %s has %d commits, want one per phase (2): %+v", id, n, log)
	}
}

func TestPoolOperationsLocallyAndThroughTheSocket(t *testing.T) {
	poolServices(t, func(t *testing.T, f hosttest.Fixture, p *Pool, svc host.Service) {
		ctx := t.Context()
		// Submit, before any worker runs: queued, and told so.
		out, err := svc.Submit(ctx, host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, InPlace: true, AutoApprove: true})
		if err != nil || out.Kind != host.HandedOn || out.RunID != "r-1" || !strings.Contains(out.Message, "queued") {
			t.Fatalf("Submit = %+v, %v; want r-1 handed on, queued", out, err)
		}
		rs, err := svc.Status(ctx, host.RunRequest{RunID: "r-1"})
		if err != nil || !rs.Pending || rs.Status != host.StatusQueued || rs.Snapshot.RunID != "r-1" {
			t.Fatalf("Status of a queued run = %s %q pending=%v, %v; want r-1 queued, pending", rs.Snapshot.RunID, rs.Status, rs.Pending, err)
		}
		// A queued run is not deleted.
		if err := svc.Delete(ctx, host.RunRequest{RunID: "r-1"}); host.CodeOf(err) != host.Held || !strings.Contains(err.Error(), "queued") {
			t.Fatalf("Delete of a queued run: %v (%s), want held", err, host.CodeOf(err))
		}
		// A queued run is refused a second place in the queue.
		if _, err := svc.Submit(ctx, host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script}); host.CodeOf(err) != host.Held {
			t.Fatalf("Submit of a queued run id: %v (%s), want held", err, host.CodeOf(err))
		}
		// Cancel of a queued run takes it out of the queue: it never runs.
		if _, err := svc.Submit(ctx, host.RunSpec{RunID: "r-2", PlanFile: f.Plan, Script: f.Script, InPlace: true}); err != nil {
			t.Fatal(err)
		}
		out, err = svc.Cancel(ctx, host.RunRequest{RunID: "r-2"})
		if err != nil || out.Kind != host.Cancelled || out.RunID != "r-2" || !strings.Contains(out.Message, "removed from the queue") {
			t.Fatalf("Cancel of a queued run = %+v, %v; want removed from the queue", out, err)
		}
		if _, err := svc.Status(ctx, host.RunRequest{RunID: "r-2"}); host.CodeOf(err) != host.Refused || err.Error() != "no run r-2 in "+f.Store {
			t.Fatalf("Status of a run cancelled in the queue: %v (%s), want no such run", err, host.CodeOf(err))
		}
		// Another repository's run is refused: its work tree is not this one.
		other := t.TempDir()
		if _, err := svc.Submit(ctx, host.RunSpec{RunID: "r-x", PlanFile: f.Plan, Repo: other}); host.CodeOf(err) != host.Refused ||
			!strings.Contains(err.Error(), "not "+other) {
			t.Fatalf("Submit for another repository: %v (%s), want refused naming it", err, host.CodeOf(err))
		}

		// The workers take r-1; AutoApprove carries it to its end.
		startPool(t, p)
		rs = waitStatus(t, p, svc, "r-1", "completed")
		if got := len(rs.Snapshot.State.Plan.Phases); got != 2 {
			t.Fatalf("Status carries %d phases, want the plan's 2", got)
		}
		checkCommitted(t, f, p.h, "r-1")

		// A run without AutoApprove parks at its plan's approval (Start
		// queues like Submit); the answer goes through the pool.
		out, err = svc.Start(ctx, host.RunSpec{RunID: "r-3", PlanFile: f.Plan, Script: f.Script, InPlace: true})
		if err != nil || out.Kind != host.HandedOn || out.RunID != "r-3" {
			t.Fatalf("Start through the pool = %+v, %v; want r-3 handed on", out, err)
		}
		waitStatus(t, p, svc, "r-3", "awaiting_approval")
		if _, err := svc.Answer(ctx, host.AnswerRequest{RunID: "r-3", Verdict: host.Retry}); host.CodeOf(err) != host.Usage ||
			!strings.Contains(err.Error(), "not for recovery's question") {
			t.Fatalf("Answer with a decision to a plan's approval: %v (%s), want usage", err, host.CodeOf(err))
		}
		out, err = svc.Answer(ctx, host.AnswerRequest{RunID: "r-3", Verdict: host.Approve})
		if err != nil || out.Kind != host.HandedOn || out.RunID != "r-3" || !strings.Contains(out.Message, "Run r-3 approved; gaffer serve") {
			t.Fatalf("Answer through the pool = %+v, %v; want handed on, approved", out, err)
		}
		waitStatus(t, p, svc, "r-3", "completed")

		// A run that fails before its first checkpoint is told as such, with
		// the cause, not as no such run.
		missing := filepath.Join(t.TempDir(), "gone.md")
		if _, err := svc.Submit(ctx, host.RunSpec{RunID: "r-4", PlanFile: missing, Script: f.Script, InPlace: true}); err != nil {
			t.Fatal(err)
		}
		for {
			_, err := svc.Status(ctx, host.RunRequest{RunID: "r-4"})
			if err == nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "run r-4 failed before its first checkpoint") || !strings.Contains(err.Error(), "gone.md") {
				t.Fatalf("Status of a run that failed to start: %v (%s)", err, host.CodeOf(err))
			}
			break
		}

		// Finished runs: Resume is refused, and so is a new run of their id.
		if _, err := svc.Resume(ctx, host.RunRequest{RunID: "r-1"}); host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "already finished") {
			t.Fatalf("Resume of a finished run: %v (%s), want refused", err, host.CodeOf(err))
		}
		if _, err := svc.Submit(ctx, host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script}); host.CodeOf(err) != host.Refused ||
			!strings.Contains(err.Error(), "run r-1 already exists") {
			t.Fatalf("Submit of an existing run id: %v (%s), want refused", err, host.CodeOf(err))
		}

		// Reads are the Host's.
		list, err := svc.List(ctx, host.ListRequest{})
		if err != nil || len(list) != 2 {
			t.Fatalf("List = %d runs, %v; want 2 (r-4 never started)", len(list), err)
		}
		for _, r := range host.StatusesOf(list) {
			if r.Status != "completed" || r.Pending {
				t.Errorf("List: run %s is %q pending=%v, want completed", r.Snapshot.RunID, r.Status, r.Pending)
			}
		}
		hist, err := svc.History(ctx, host.RunRequest{RunID: "r-3"})
		if err != nil || len(hist) < 4 {
			t.Fatalf("History = %d checkpoints, %v", len(hist), err)
		}
		if hist[0].Seq <= hist[len(hist)-1].Seq || hist[0].Status != "completed" {
			t.Fatalf("History is not newest first ending completed: %+v", hist[0])
		}
		if !slices.ContainsFunc(hist, func(c host.Checkpoint) bool { return c.Interrupt == nodes.NodeApproval }) {
			t.Fatal("History of the answered run has no checkpoint waiting for approval")
		}
	})
}

// The checkpoint that parks a run is written before its worker's job
// returns: an answer in between (the status already says
// awaiting_approval) waits for the job to end, and is queued then.
func TestPoolAnswerWaitsForTheJobThatParkedTheRun(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	p := newTestPool(t, h)
	interrupted, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	// Subscribers are called synchronously: this one holds the job that
	// parked r-1 between its checkpoint and its end.
	defer h.Subscribe(func(e graph.Event) {
		if e.Kind == graph.RunInterrupted && e.RunID == "r-1" {
			once.Do(func() { close(interrupted); <-release })
		}
	})()
	defer once.Do(func() {}) // a failed test does not hold the worker
	startPool(t, p)
	if _, err := p.Submit(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, InPlace: true}); err != nil {
		t.Fatal(err)
	}
	<-interrupted
	type result struct {
		out host.Outcome
		err error
	}
	answered := make(chan result, 1)
	go func() {
		out, err := p.Answer(context.Background(), host.AnswerRequest{RunID: "r-1", Verdict: host.Approve})
		answered <- result{out, err}
	}()
	select {
	case r := <-answered:
		close(release)
		t.Fatalf("Answer while the job that parked the run was ending = %+v, %v; want it to wait for the job", r.out, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if r := <-answered; r.err != nil || r.out.Kind != host.HandedOn {
		t.Fatalf("Answer = %+v, %v; want handed on", r.out, r.err)
	}
	waitStatus(t, p, p, "r-1", "completed")
}

// A second answer while the first waits in the queue is told so, with
// the command that says when the run goes on.
func TestPoolSecondAnswerWhileTheFirstIsQueued(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	if out, err := h.Start(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, InPlace: true}); err != nil || out.Kind != host.Parked {
		t.Fatalf("Start = %+v, %v; want parked", out, err)
	}
	p := newTestPool(t, h) // no workers: answers stay queued
	if out, err := p.Answer(t.Context(), host.AnswerRequest{RunID: "r-1", Verdict: host.Approve}); err != nil || out.Kind != host.HandedOn {
		t.Fatalf("first Answer = %+v, %v; want handed on", out, err)
	}
	_, err := p.Answer(t.Context(), host.AnswerRequest{RunID: "r-1", Verdict: host.Approve})
	if host.CodeOf(err) != host.Held || !strings.Contains(err.Error(), "run r-1 was answered already: the answer waits for a worker") ||
		!strings.Contains(err.Error(), "gaffer status r-1") {
		t.Fatalf("second Answer: %v (%s)", err, host.CodeOf(err))
	}
}

// legacyJournal is a journal as the serve of job spec version 1 wrote it:
// the job's spec is cli.RunOptions with Go's field names. $PLAN, $SCRIPT
// and $REPO are the fixture's paths (JSON-quoted).
const legacyJournal = `{"version":1,"active":null,"queued":[{"run_id":"r-old","kind":"start",` +
	`"spec":{"PlanFile":$PLAN,"Goal":"","Driver":"","Model":"","Profile":"","Script":$SCRIPT,"AutoApprove":true,` +
	`"AllowDirty":false,"Pace":0,"TrackerID":"","RunID":"r-old","Repo":$REPO},"key":$REPO}]}`

// A journal left by a serve, in the job spec's previous format or the
// current one, recovers: the next serve executes its runs.
func TestPoolRecoversAVersion1Journal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		journal func(f hosttest.Fixture, key string) string
	}{
		{"version 1", func(f hosttest.Fixture, key string) string {
			q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
			return strings.NewReplacer("$PLAN", q(f.Plan), "$SCRIPT", q(f.Script), "$REPO", q(key)).Replace(legacyJournal)
		}},
		{"version 2", func(f hosttest.Fixture, key string) string {
			spec, err := encodeJob(host.RunSpec{RunID: "r-old", PlanFile: f.Plan, Script: f.Script, InPlace: true, AutoApprove: true, Repo: key})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(map[string]any{"version": 1, "queued": []serve.Job{{RunID: "r-old", Kind: serve.JobStart, Spec: spec, Key: key}}})
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hosttest.New(t)
			key, err := host.RepoKey(f.Repo)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(serve.JournalPath(f.Store), []byte(tc.journal(f, key)), 0o600); err != nil {
				t.Fatal(err)
			}
			h := f.Open(t, host.Config{})
			p := newTestPool(t, h)
			if rs, err := p.Status(t.Context(), host.RunRequest{RunID: "r-old"}); err != nil || !rs.Pending || rs.Status != host.StatusQueued {
				t.Fatalf("Status of the journal's run = %q pending=%v, %v; want queued", rs.Status, rs.Pending, err)
			}
			startPool(t, p)
			waitStatus(t, p, p, "r-old", "completed")
			checkCommitted(t, f, h, "r-old")
		})
	}
}

func TestDecodeJob(t *testing.T) {
	spec := host.RunSpec{RunID: "r-1", PlanFile: "/p/plan.md", Goal: "greet", Driver: "script", Model: "m", Profile: "fast",
		Script: "/p/s.yaml", AutoApprove: true, AllowDirty: true, Pace: 2 * time.Second, TrackerID: "T-1", Repo: "/p/repo"}
	b, err := encodeJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"type":"gaffer.run","version":2,"run":{"run_id":"r-1",`) {
		t.Fatalf("encodeJob = %s, want the tagged version 2", b)
	}
	if got, err := decodeJob(b); err != nil || !reflect.DeepEqual(got, spec) {
		t.Fatalf("decodeJob(encodeJob(spec)) = %+v, %v; want %+v", got, err, spec)
	}
	// Plan does not cross a process: it is not in the journal.
	withPlan := spec
	withPlan.Plan = []byte("# Plan")
	if b2, err := encodeJob(withPlan); err != nil || string(b2) != string(b) {
		t.Fatalf("encodeJob kept the plan's content: %s, %v", b2, err)
	}

	spec.InPlace = true // version 1 ran every run in the user's checkout
	legacy := `{"PlanFile":"/p/plan.md","Goal":"greet","Driver":"script","Model":"m","Profile":"fast","Script":"/p/s.yaml",` +
		`"AutoApprove":true,"AllowDirty":true,"Pace":2000000000,"TrackerID":"T-1","RunID":"r-1","Repo":"/p/repo"}`
	if got, err := decodeJob([]byte(legacy)); err != nil || !reflect.DeepEqual(got, spec) {
		t.Fatalf("decodeJob(version 1) = %+v, %v; want %+v", got, err, spec)
	}

	for _, tc := range []struct {
		name, spec string
		want       []string // in the error
	}{
		{"unknown type", `{"type":"gaffer.fork","version":2,"run":{}}`, []string{`type "gaffer.fork"`, `want "gaffer.run"`}},
		{"newer version", `{"type":"gaffer.run","version":3,"run":{}}`, []string{"version 3", "versions 1 and 2"}},
		{"unknown field", `{"type":"gaffer.run","version":2,"run":{"goal":"g","colour":"red"}}`, []string{`"colour"`}},
		{"unknown envelope field", `{"type":"gaffer.run","version":2,"run":{},"extra":1}`, []string{`"extra"`}},
		{"unknown version 1 field", `{"PlanFile":"/p/plan.md","Colour":"red"}`, []string{"version 1", `"Colour"`}},
		{"plan content", `{"type":"gaffer.run","version":2,"run":{"Plan":"IyBQbGFu"}}`, []string{`"Plan"`}},
		{"version 1 pace as text", `{"PlanFile":"/p/plan.md","Pace":"2s"}`, []string{"version 1", "Pace"}},
		{"not JSON", `{"type":`, []string{"job spec"}},
		{"not an object", `[1]`, []string{"job spec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeJob([]byte(tc.spec))
			if err == nil {
				t.Fatalf("decodeJob(%s) = %+v, want an error", tc.spec, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("decodeJob(%s): %v, want it to name %s", tc.spec, err, w)
				}
			}
		})
	}
}

// decodeJob never panics, and what it accepts survives the journal: the
// spec re-encoded (version 2) decodes to the same host.RunSpec.
func FuzzDecodeJob(f *testing.F) {
	for _, s := range []string{
		`{"type":"gaffer.run","version":2,"run":{"run_id":"r-1","plan_file":"/p/plan.md","auto_approve":true,"pace":1500000000}}`,
		`{"PlanFile":"/p/plan.md","Goal":"","Driver":"","Model":"","Profile":"","Script":"/p/s.yaml","AutoApprove":true,"AllowDirty":false,"Pace":0,"TrackerID":"","RunID":"r-old","Repo":"/p/repo"}`,
		`{"type":"gaffer.run","version":3,"run":{}}`,
		`{"type":"other","version":2}`,
		`{"Pace":-1,"goal":"\ud800"}`,
		`null`,
		`{}`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		spec, err := decodeJob(b)
		if err != nil {
			return
		}
		enc, err := encodeJob(spec)
		if err != nil {
			t.Fatalf("encodeJob(%+v): %v", spec, err)
		}
		again, err := decodeJob(enc)
		if err != nil {
			t.Fatalf("decodeJob(%s) of an accepted spec re-encoded: %v", enc, err)
		}
		if !reflect.DeepEqual(again, spec) {
			t.Fatalf("round trip of %q: %+v, want %+v", b, again, spec)
		}
	})
}

// An answer a serve journaled before verdicts were kept (a nodes.Answer:
// approved and feedback) recovers: the next serve answers the run with
// it and the run goes on.
func TestPoolRecoversAnOldJournalsAnswer(t *testing.T) {
	f := hosttest.New(t)
	key, err := host.RepoKey(f.Repo)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Open(t, host.Config{})
	if out, err := h.Start(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, InPlace: true}); err != nil || out.Kind != host.Parked {
		t.Fatalf("start: %+v, %v; want parked for approval", out, err)
	}
	h.Close()
	q, _ := json.Marshal(key)
	old := `{"version":1,"active":null,"queued":[{"run_id":"r-1","kind":"answer","answer":{"approved":true,"feedback":"go"},"key":` + string(q) + `}]}`
	if err := os.WriteFile(serve.JournalPath(f.Store), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	h = f.Open(t, host.Config{})
	p := newTestPool(t, h)
	startPool(t, p)
	waitStatus(t, p, p, "r-1", "completed")
	rs, err := p.Status(t.Context(), host.RunRequest{RunID: "r-1"})
	if err != nil || rs.Snapshot.State.Approval.Feedback != "go" {
		t.Fatalf("the approval's feedback: %+v, %v; want the journal's", rs.Snapshot.State.Approval, err)
	}
	checkCommitted(t, f, h, "r-1")
}
