package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
)

func newMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

func custom(name string, payload any) graph.Event {
	return graph.Event{Kind: graph.Custom, RunID: "r1", Name: name, Payload: payload}
}

// feedRun plays the events of a three-phase run whose second phase is
// rejected once and approved on the retry.
func feedRun(m *Metrics) {
	ev := []graph.Event{
		{Kind: graph.RunStarted, RunID: "r1", Payload: "run"},
		custom(events.EventRunStatus, events.RunStatus{From: "", To: "running"}),
		{Kind: graph.NodeStarted, RunID: "r1", Node: "architect", Attempt: 1},
		{Kind: graph.NodeFinished, RunID: "r1", Node: "architect", Attempt: 1, Duration: 2 * time.Second},
		custom(events.EventAgentUsage, events.AgentUsage{Role: "architect", Model: "script", InputTokens: 100, OutputTokens: 20, CostUSD: 0.5}),
		{Kind: graph.CheckpointSaved, RunID: "r1", Seq: 2, Bytes: 1000},
		{Kind: graph.NodeFinished, RunID: "r1", Node: "approval", Attempt: 1, Err: &graph.InterruptError{}},
		custom(events.EventRunStatus, events.RunStatus{From: "running", To: "awaiting_approval"}),
		{Kind: graph.RunFinished, RunID: "r1", Payload: graph.Interrupted},
		{Kind: graph.RunStarted, RunID: "r1", Payload: "resume"},
		custom(events.EventRunStatus, &events.RunStatus{From: "awaiting_approval", To: "running"}),
		custom(events.EventPhaseFinished, events.PhaseFinished{Phase: 1, Attempt: 1, Iteration: 1, Outcome: events.OutcomeCompleted, Duration: 3 * time.Second}),
		custom(events.EventReview, events.Review{Phase: 1, Iteration: 1, Approved: true}),
		custom(events.EventReview, events.Review{Phase: 2, Iteration: 1, Approved: false}),
		custom(events.EventPhaseFinished, events.PhaseFinished{Phase: 2, Attempt: 1, Iteration: 1, Outcome: events.OutcomeRetried, Duration: time.Second}),
		{Kind: graph.NodeFinished, RunID: "r1", Node: "phased_execution", Attempt: 1, Err: errors.New("boom")},
		{Kind: graph.NodeRetry, RunID: "r1", Node: "phased_execution", Attempt: 2},
		custom(events.EventReview, events.Review{Phase: 2, Iteration: 2, Approved: true}),
		custom(events.EventPhaseFinished, &events.PhaseFinished{Phase: 2, Attempt: 1, Iteration: 2, Outcome: events.OutcomeCompleted, Duration: 4 * time.Second}),
		custom(events.EventPhaseFinished, events.PhaseFinished{Phase: 3, Attempt: 1, Iteration: 1, Outcome: events.OutcomeCompleted, Duration: 5 * time.Second}),
		custom(events.EventAgentUsage, events.AgentUsage{Role: "developer", Model: "script", InputTokens: 1000, OutputTokens: 200, CachedTokens: 50, CostUSD: 1.25}),
		custom(events.EventRunStatus, events.RunStatus{From: "running", To: "completed"}),
		custom("unknown_event", 42),
		custom(events.EventReview, "not a review"),
		{Kind: graph.RunFinished, RunID: "r1", Payload: graph.Done},
	}
	for _, e := range ev {
		m.Observe(e)
	}
}

func TestObservePhaseOutcomes(t *testing.T) {
	m, reg := newMetrics(t)
	feedRun(m)
	want := `
# HELP gaffer_phase_outcomes_total Phase attempts that ended, by outcome (completed, retried, failed, halted).
# TYPE gaffer_phase_outcomes_total counter
gaffer_phase_outcomes_total{outcome="completed"} 3
gaffer_phase_outcomes_total{outcome="failed"} 0
gaffer_phase_outcomes_total{outcome="halted"} 0
gaffer_phase_outcomes_total{outcome="retried"} 1
# HELP gaffer_review_verdicts_total Reviewer verdicts, by verdict (approved, rejected).
# TYPE gaffer_review_verdicts_total counter
gaffer_review_verdicts_total{verdict="approved"} 2
gaffer_review_verdicts_total{verdict="rejected"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gaffer_phase_outcomes_total", "gaffer_review_verdicts_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.phase.duration); n != 2 {
		t.Errorf("phase duration series = %d, want 2 (completed, retried)", n)
	}
	// Iterations are observed for terminal outcomes only: 1, 2, 1.
	hist := `
# HELP gaffer_phase_review_iterations Review iterations a phase attempt took to its final outcome (completed, failed or halted).
# TYPE gaffer_phase_review_iterations histogram
gaffer_phase_review_iterations_bucket{le="1"} 2
gaffer_phase_review_iterations_bucket{le="2"} 3
gaffer_phase_review_iterations_bucket{le="3"} 3
gaffer_phase_review_iterations_bucket{le="4"} 3
gaffer_phase_review_iterations_bucket{le="5"} 3
gaffer_phase_review_iterations_bucket{le="6"} 3
gaffer_phase_review_iterations_bucket{le="7"} 3
gaffer_phase_review_iterations_bucket{le="8"} 3
gaffer_phase_review_iterations_bucket{le="9"} 3
gaffer_phase_review_iterations_bucket{le="10"} 3
gaffer_phase_review_iterations_bucket{le="+Inf"} 3
gaffer_phase_review_iterations_sum 4
gaffer_phase_review_iterations_count 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(hist), "gaffer_phase_review_iterations"); err != nil {
		t.Fatal(err)
	}
}

func TestObserveNodesAndGraphRuns(t *testing.T) {
	m, _ := newMetrics(t)
	feedRun(m)
	for _, c := range []struct {
		node, outcome string
		want          float64
	}{
		{"architect", NodeOK, 1},
		{"approval", NodeInterrupted, 1},
		{"phased_execution", NodeError, 1},
	} {
		if got := testutil.ToFloat64(m.nodeTransitions.WithLabelValues(c.node, c.outcome)); got != c.want {
			t.Errorf("transitions{%s,%s} = %v, want %v", c.node, c.outcome, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.nodeRetries.WithLabelValues("phased_execution")); got != 1 {
		t.Errorf("retries = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.graphStarted.WithLabelValues("resume")); got != 1 {
		t.Errorf("resumes = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.graphFinished.WithLabelValues("interrupted")); got != 1 {
		t.Errorf("interrupted = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.graphFinished.WithLabelValues("done")); got != 1 {
		t.Errorf("done = %v, want 1", got)
	}
	m.Observe(graph.Event{Kind: graph.RunFinished, Err: errors.New("x")})
	if got := testutil.ToFloat64(m.graphFinished.WithLabelValues("failed")); got != 1 {
		t.Errorf("failed = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.checkpoint.saved); got != 1 {
		t.Errorf("checkpoints = %v, want 1", got)
	}
}

func TestObserveUsage(t *testing.T) {
	m, _ := newMetrics(t)
	feedRun(m)
	if got := testutil.ToFloat64(m.agent.tokens.WithLabelValues("developer", "script", "input")); got != 1000 {
		t.Errorf("developer input tokens = %v", got)
	}
	if got := testutil.ToFloat64(m.agent.tokens.WithLabelValues("developer", "script", "cached")); got != 50 {
		t.Errorf("developer cached tokens = %v", got)
	}
	if got := testutil.ToFloat64(m.agent.cost.WithLabelValues("architect", "script")); got != 0.5 {
		t.Errorf("architect cost = %v", got)
	}
	m.ObserveUsage(events.AgentUsage{InputTokens: -5, CostUSD: -1, Expansions: -3}) // must not panic on a negative add
	if got := testutil.ToFloat64(m.agent.expansions); got != 0 {
		t.Errorf("story expansions = %v before any, want 0", got)
	}
	m.ObserveUsage(events.AgentUsage{Role: "developer", Model: "m", Expansions: 2})
	m.ObserveUsage(events.AgentUsage{Role: "developer", Model: "m", Phase: 2, Lane: 1, Expansions: 1}) // a lane's session
	m.Observe(custom(events.EventAgentUsage, events.AgentUsage{Role: "developer", Expansions: 1}))
	if got := testutil.ToFloat64(m.agent.expansions); got != 4 {
		t.Errorf("story expansions = %v, want 4", got)
	}
	if got := testutil.ToFloat64(m.agent.sessions.WithLabelValues("unknown", "unknown")); got != 1 {
		t.Errorf("unknown sessions = %v", got)
	}
}

func TestRunStatusGauges(t *testing.T) {
	m, _ := newMetrics(t)
	m.ObserveRunStatus(events.RunStatus{To: "running"})
	m.ObserveRunStatus(events.RunStatus{To: "running"})
	m.ObserveRunStatus(events.RunStatus{From: "running", To: "awaiting_approval"})
	if got := testutil.ToFloat64(m.runs.pending.WithLabelValues(StoreLocal)); got != 1 {
		t.Errorf("pending approvals = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.runs.byState.WithLabelValues("running", StoreLocal)); got != 1 {
		t.Errorf("running = %v, want 1", got)
	}
	m.ObserveRunStatus(events.RunStatus{From: "awaiting_approval", To: "rejected"})
	if got := testutil.ToFloat64(m.runs.pending.WithLabelValues(StoreLocal)); got != 0 {
		t.Errorf("pending approvals = %v, want 0", got)
	}
	// A status change for a run started by another process never goes below zero.
	m.ObserveRunStatus(events.RunStatus{From: "halted", To: "cancelled"})
	if got := testutil.ToFloat64(m.runs.byState.WithLabelValues("halted", StoreLocal)); got != 0 {
		t.Errorf("halted = %v, want 0", got)
	}
	m.SetRuns(map[string]int{"awaiting_approval": 3, "completed": 2})
	for s, want := range map[string]float64{"awaiting_approval": 3, "completed": 2, "running": 0, "rejected": 0, "cancelled": 0} {
		if got := testutil.ToFloat64(m.runs.byState.WithLabelValues(s, StoreLocal)); got != want {
			t.Errorf("after SetRuns %s = %v, want %v", s, got, want)
		}
	}
	if got := testutil.ToFloat64(m.runs.pending.WithLabelValues(StoreLocal)); got != 3 {
		t.Errorf("pending approvals = %v, want 3", got)
	}
}

func TestNoRunIDLabels(t *testing.T) {
	m, reg := newMetrics(t)
	feedRun(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "gaffer_") {
			t.Errorf("metric %s lacks the gaffer_ prefix", mf.GetName())
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if strings.Contains(l.GetName(), "run") || strings.Contains(l.GetName(), "phase") || l.GetValue() == "r1" {
					t.Errorf("%s has an unbounded label %s=%s", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func TestNewTwiceOnOneRegistryFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg); err == nil {
		t.Fatal("second New on one registry succeeded")
	}
}

type slowStore struct {
	checkpoint.Store
	now  *time.Time
	fail error
}

func (s slowStore) Put(context.Context, checkpoint.Checkpoint, checkpoint.PutOptions) error {
	*s.now = s.now.Add(250 * time.Millisecond)
	return s.fail
}

func TestInstrumentStore(t *testing.T) {
	m, _ := newMetrics(t)
	now := time.Unix(0, 0)
	st := InstrumentStore(slowStore{now: &now}, m)
	st.now = func() time.Time { return now }
	if err := st.Put(context.Background(), checkpoint.Checkpoint{}, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.checkpoint.latency); n != 1 {
		t.Fatalf("latency series = %d", n)
	}
	if got := histSum(t, m.checkpoint.latency); got != 0.25 {
		t.Errorf("latency sum = %v, want 0.25", got)
	}
	// Once events carry durations, the wrapper stops timing.
	m.Observe(graph.Event{Kind: graph.CheckpointSaved, Duration: time.Second, Bytes: 10})
	_ = st.Put(context.Background(), checkpoint.Checkpoint{}, checkpoint.PutOptions{})
	if got := histSum(t, m.checkpoint.latency); got != 1.25 {
		t.Errorf("latency sum = %v, want 1.25", got)
	}
	fail := InstrumentStore(slowStore{now: &now, fail: checkpoint.ErrConflict}, m)
	if err := fail.Put(context.Background(), checkpoint.Checkpoint{}, checkpoint.PutOptions{}); !errors.Is(err, checkpoint.ErrConflict) {
		t.Errorf("Put error = %v, want ErrConflict", err)
	}
}

func histSum(t *testing.T, h prometheus.Histogram) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	h.Collect(ch)
	pb := &dto.Metric{}
	if err := (<-ch).Write(pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetHistogram().GetSampleSum()
}

func TestHandler(t *testing.T) {
	m, reg := newMetrics(t)
	feedRun(m)
	var notReady error = errors.New("store not open")
	srv := httptest.NewServer(Handler(reg, func() error { return notReady }))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "store not open") {
		t.Errorf("/readyz = %d %q, want 503", code, body)
	}
	notReady = nil
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
	code, body := get("/metrics")
	if code != 200 || !strings.Contains(body, `gaffer_phase_outcomes_total{outcome="completed"} 3`) {
		t.Fatalf("/metrics = %d:\n%s", code, body)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: install it with `apt-get install -y prometheus` to lint /metrics")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"9090":           "127.0.0.1:9090",
		":9090":          "127.0.0.1:9090",
		"0":              "127.0.0.1:0",
		"0.0.0.0:9090":   "0.0.0.0:9090",
		"localhost:9100": "localhost:9100",
		"[::1]:9100":     "[::1]:9100",
	} {
		got, err := ListenAddr(in)
		if err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:", "host:notaport:x", "127.0.0.1:99999999"} {
		if got, err := ListenAddr(bad); !errors.Is(err, ErrAddr) {
			t.Errorf("ListenAddr(%q) = %q, %v; want ErrAddr", bad, got, err)
		}
	}
}

func TestListenAndServe(t *testing.T) {
	_, reg := newMetrics(t)
	ln, err := Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Fatalf("listening on %s, want loopback", ln.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, Handler(reg, nil)) }()
	resp, err := http.Get(fmt.Sprintf("http://%s/healthz", ln.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel: %v", err)
	}
}

// TestLaneMetrics: lane_started and lane_finished keep the running
// lanes' sessions and count the ended ones by status; phase_finished
// observes its phase's lanes (a phase of one, from any emitter, as 1).
func TestLaneMetrics(t *testing.T) {
	m, reg := newMetrics(t)
	lane := func(n int) events.LaneSession {
		return events.LaneSession{RunID: "r1", Phase: 1, Lane: n, Attempt: 1, Tasks: []string{strconv.Itoa(n)}}
	}
	for n := 1; n <= 3; n++ {
		m.Observe(custom(events.EventLaneStarted, lane(n)))
	}
	if got := testutil.ToFloat64(m.agent.laneRunning); got != 3 {
		t.Fatalf("running lanes = %v after three started, want 3", got)
	}
	done, failed := lane(1), lane(2)
	done.Status = events.LaneDone
	failed.Status, failed.Error = events.LaneFailed, "the tests fail"
	m.Observe(custom(events.EventLaneFinished, done))
	m.Observe(custom(events.EventLaneFinished, &failed))
	if got := testutil.ToFloat64(m.agent.laneRunning); got != 1 {
		t.Fatalf("running lanes = %v after two finished, want 1", got)
	}
	m.Observe(custom(events.EventPhaseFinished, events.PhaseFinished{Phase: 1, Attempt: 1, Iteration: 1, Outcome: events.OutcomeRetried, Lanes: 3}))
	m.Observe(custom(events.EventPhaseFinished, events.PhaseFinished{Phase: 2, Attempt: 1, Iteration: 1, Outcome: events.OutcomeCompleted}))
	want := `
# HELP gaffer_lane_sessions_running Developer sessions of a phase's lanes running now, in this process.
# TYPE gaffer_lane_sessions_running gauge
gaffer_lane_sessions_running 1
# HELP gaffer_lane_sessions_total Developer sessions of a phase's lanes that ended, by status (done, failed, stopped).
# TYPE gaffer_lane_sessions_total counter
gaffer_lane_sessions_total{status="done"} 1
gaffer_lane_sessions_total{status="failed"} 1
gaffer_lane_sessions_total{status="stopped"} 0
# HELP gaffer_phase_lanes Lanes of each phase attempt that ended (1 for a phase of one lane).
# TYPE gaffer_phase_lanes histogram
gaffer_phase_lanes_bucket{le="1"} 1
gaffer_phase_lanes_bucket{le="2"} 1
gaffer_phase_lanes_bucket{le="3"} 2
gaffer_phase_lanes_bucket{le="4"} 2
gaffer_phase_lanes_bucket{le="5"} 2
gaffer_phase_lanes_bucket{le="6"} 2
gaffer_phase_lanes_bucket{le="7"} 2
gaffer_phase_lanes_bucket{le="8"} 2
gaffer_phase_lanes_bucket{le="+Inf"} 2
gaffer_phase_lanes_sum 4
gaffer_phase_lanes_count 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gaffer_lane_sessions_running", "gaffer_lane_sessions_total", "gaffer_phase_lanes"); err != nil {
		t.Fatal(err)
	}
}
