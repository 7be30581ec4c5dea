package metrics

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
)

// Node outcomes, the values of the outcome label of the node metrics.
const (
	NodeOK          = "ok"          // the attempt returned a state
	NodeError       = "error"       // the attempt failed
	NodeInterrupted = "interrupted" // the attempt stopped on graph.Interrupt
)

// runStatuses returns the workflow run statuses the gaffer_runs gauge
// always reports, zero or not.
func runStatuses() []string {
	return []string{"running", "awaiting_approval", "completed", "failed", "halted", "rejected", "cancelled"}
}

// statusAwaitingApproval is the run status counted by gaffer_pending_approvals.
const statusAwaitingApproval = "awaiting_approval"

// Metrics holds gaffer's collectors. Create it with New; feed it with Observe
// (or the Set methods); it is safe for concurrent use.
type Metrics struct {
	nodeTransitions *prometheus.CounterVec
	nodeDuration    *prometheus.HistogramVec
	nodeRetries     *prometheus.CounterVec
	graphStarted    *prometheus.CounterVec
	graphFinished   *prometheus.CounterVec
	phase           phaseMetrics
	checkpoint      checkpointMetrics
	runs            *runMetrics
	agent           agentMetrics
	serve           serveMetrics
	recovery        recoveryMetrics
}

type phaseMetrics struct {
	outcomes   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	verdicts   *prometheus.CounterVec
	iterations prometheus.Histogram
	// lanes: the lanes of each phase attempt that ended (1 for a phase
	// of one lane).
	lanes prometheus.Histogram
}

type checkpointMetrics struct {
	// timedByEvents is set once a CheckpointSaved event carried a Duration:
	// from then on the events time the writes and Store does not.
	timedByEvents atomic.Bool
	saved         prometheus.Counter
	latency       prometheus.Histogram
	size          prometheus.Histogram
}

type agentMetrics struct {
	sessions *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec
	// contextOver counts the times context management went over
	// events.ContextCostLimit of a run's cost; contextShare is the latest share.
	contextOver  prometheus.Counter
	contextShare prometheus.Gauge
	// laneRunning counts the lanes' developer sessions running now
	// (lane_started less lane_finished); laneSessions the ended ones by
	// status.
	laneRunning  prometheus.Gauge
	laneSessions *prometheus.CounterVec
	// expansions counts the developer sessions' expansions of an earlier
	// phase's Task Story records (agent_usage's Expansions).
	expansions prometheus.Counter
}

// recoveryMetrics count what recovery does (issue 11).
type recoveryMetrics struct {
	doctor  *prometheus.CounterVec // by tier and action
	replans *prometheus.CounterVec // by outcome
	stuck   *prometheus.CounterVec // by decision
	budget  prometheus.Counter
}

type serveMetrics struct {
	queue   *queueCollector
	busy    prometheus.Gauge
	workers prometheus.Gauge
}

// New creates the collectors and registers them on reg. It fails when one of
// them is already registered there.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		nodeTransitions: newCounterVec("gaffer_node_transitions_total", "Node attempts that ended, by node and outcome (ok, error, interrupted).", "node", "outcome"),
		nodeDuration:    newHistogramVec("gaffer_node_duration_seconds", "Duration of node attempts, by node and outcome.", prometheus.ExponentialBuckets(0.005, 4, 10), "node", "outcome"),
		nodeRetries:     newCounterVec("gaffer_node_retries_total", "Failed node attempts that the node's retry policy retries.", "node"),
		graphStarted:    newCounterVec("gaffer_graph_runs_started_total", "Graph executions started, by mode (run or resume).", "mode"),
		graphFinished:   newCounterVec("gaffer_graph_runs_finished_total", "Graph executions that stopped, by status (done, interrupted, failed).", "status"),
		phase: phaseMetrics{
			outcomes:   newCounterVec("gaffer_phase_outcomes_total", "Phase attempts that ended, by outcome (completed, retried, failed, halted).", "outcome"),
			duration:   newHistogramVec("gaffer_phase_duration_seconds", "Duration of phase attempts from the agent's start to the verdict, by outcome.", prometheus.ExponentialBuckets(1, 3, 10), "outcome"),
			verdicts:   newCounterVec("gaffer_review_verdicts_total", "Reviewer verdicts, by verdict (approved, rejected).", "verdict"),
			iterations: newHistogram("gaffer_phase_review_iterations", "Review iterations a phase attempt took to its final outcome (completed, failed or halted).", prometheus.LinearBuckets(1, 1, 10)),
			lanes:      newHistogram("gaffer_phase_lanes", "Lanes of each phase attempt that ended (1 for a phase of one lane).", prometheus.LinearBuckets(1, 1, 8)),
		},
		checkpoint: checkpointMetrics{
			saved:   newCounter("gaffer_checkpoints_saved_total", "Checkpoints written to the store."),
			latency: newHistogram("gaffer_checkpoint_write_seconds", "Latency of checkpoint writes, including fsync with sync durability.", prometheus.ExponentialBuckets(0.0001, 4, 10)),
			size:    newHistogram("gaffer_checkpoint_size_bytes", "Encoded state size of written checkpoints.", prometheus.ExponentialBuckets(256, 4, 10)),
		},
		runs: newRunMetrics(),
		agent: agentMetrics{
			sessions:     newCounterVec("gaffer_agent_sessions_total", "Agent sessions, by role and model.", "role", "model"),
			tokens:       newCounterVec("gaffer_agent_tokens_total", "Agent tokens, by role, model and kind (input, output, cached).", "role", "model", "kind"),
			cost:         newCounterVec("gaffer_agent_cost_usd_total", "Agent cost in US dollars, by role and model.", "role", "model"),
			contextOver:  newCounter("gaffer_context_cost_over_limit_total", "Times context management (the summarizer role) went over 10% of a run's cost."),
			contextShare: newGauge("gaffer_context_cost_share", "Context management's share of the cost of the run that last went over the limit (0..1)."),
			laneRunning:  newGauge("gaffer_lane_sessions_running", "Developer sessions of a phase's lanes running now, in this process."),
			laneSessions: newCounterVec("gaffer_lane_sessions_total", "Developer sessions of a phase's lanes that ended, by status (done, failed, stopped).", "status"),
			expansions:   newCounter("gaffer_story_expansions_total", "Expansions of an earlier phase's Task Story records by developer sessions (the escape hatch, seed 004), capped at 2 per phase per session."),
		},
		recovery: recoveryMetrics{
			doctor:  newCounterVec("gaffer_doctor_calls_total", "Doctor calls, by tier (cheap, strong) and the action advised (none when the answer did not parse).", "tier", "action"),
			replans: newCounterVec("gaffer_replans_total", "Replanner answers, by outcome: accepted (a revision within the phase's goal anchor), refused (a revision that narrows the phase), no_revision (the replanner failed or gave none). status's replans counts accepted and refused.", "outcome"),
			stuck:   newCounterVec("gaffer_stuck_decisions_total", "Stuck handler decisions, by decision (stop, needs_human, reduce_scope, replan, escalate_model).", "decision"),
			budget:  newCounter("gaffer_budget_warnings_total", "Runs that spent 80% of their budget (limits.max_run_cost_usd, limits.max_run_tokens)."),
		},
		serve: serveMetrics{
			queue:   newQueueCollector(),
			busy:    newGauge("gaffer_serve_workers_busy", "gaffer serve workers executing a run."),
			workers: newGauge("gaffer_serve_workers", "gaffer serve workers configured."),
		},
	}
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	m.preset()
	return m, nil
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.nodeTransitions, m.nodeDuration, m.nodeRetries, m.graphStarted, m.graphFinished,
		m.phase.outcomes, m.phase.duration, m.phase.verdicts, m.phase.iterations, m.phase.lanes,
		m.checkpoint.saved, m.checkpoint.latency, m.checkpoint.size,
		m.runs,
		m.agent.sessions, m.agent.tokens, m.agent.cost, m.agent.contextOver, m.agent.contextShare,
		m.agent.laneRunning, m.agent.laneSessions, m.agent.expansions,
		m.serve.queue, m.serve.busy, m.serve.workers,
		m.recovery.doctor, m.recovery.replans, m.recovery.stuck, m.recovery.budget,
	}
}

// preset creates the series of the fixed label values at zero, so that
// queries and dashboards see them before the first event.
func (m *Metrics) preset() {
	for _, o := range []string{events.OutcomeCompleted, events.OutcomeRetried, events.OutcomeFailed, events.OutcomeHalted} {
		m.phase.outcomes.WithLabelValues(o)
	}
	for _, v := range []string{"approved", "rejected"} {
		m.phase.verdicts.WithLabelValues(v)
	}
	for _, v := range []string{events.LaneDone, events.LaneFailed, events.LaneStopped} {
		m.agent.laneSessions.WithLabelValues(v)
	}
	for _, s := range []string{"done", "interrupted", "failed"} {
		m.graphFinished.WithLabelValues(s)
	}
	for _, s := range []string{"run", "resume"} {
		m.graphStarted.WithLabelValues(s)
	}
	m.runs.preset()
	for _, o := range replanOutcomes() {
		m.recovery.replans.WithLabelValues(o)
	}
}

// Observe updates the metrics from one graph event. Pass it to
// graph.Runner.Subscribe. Events it does not know are ignored.
func (m *Metrics) Observe(e graph.Event) {
	switch e.Kind {
	case graph.RunStarted:
		mode, _ := e.Payload.(string)
		if mode != "resume" {
			mode = "run"
		}
		m.graphStarted.WithLabelValues(mode).Inc()
	case graph.RunFinished:
		m.graphFinished.WithLabelValues(finishStatus(e)).Inc()
	case graph.NodeFinished:
		outcome := nodeOutcome(e.Err)
		m.nodeTransitions.WithLabelValues(e.Node, outcome).Inc()
		m.nodeDuration.WithLabelValues(e.Node, outcome).Observe(e.Duration.Seconds())
	case graph.NodeRetry:
		m.nodeRetries.WithLabelValues(e.Node).Inc()
	case graph.CheckpointSaved:
		m.checkpoint.saved.Inc()
		m.checkpoint.size.Observe(float64(e.Bytes))
		if e.Duration > 0 {
			m.checkpoint.timedByEvents.Store(true)
			m.checkpoint.latency.Observe(e.Duration.Seconds())
		}
	case graph.Custom:
		m.observeCustom(e.Name, e.Payload)
	}
}

func finishStatus(e graph.Event) string {
	if e.Err != nil {
		var ie *graph.InterruptError
		if errors.As(e.Err, &ie) || errors.Is(e.Err, graph.ErrInterrupted) {
			return "interrupted"
		}
		return "failed"
	}
	if s, ok := e.Payload.(graph.Status); ok && s == graph.Interrupted {
		return "interrupted"
	}
	return "done"
}

func nodeOutcome(err error) string {
	if err == nil {
		return NodeOK
	}
	var ie *graph.InterruptError
	if errors.As(err, &ie) {
		return NodeInterrupted
	}
	return NodeError
}

// observeCustom handles the workflow's events. Payloads may be values or
// pointers.
func (m *Metrics) observeCustom(name string, payload any) {
	switch name {
	case events.EventPhaseFinished:
		observe(payload, m.ObservePhase)
	case events.EventReview:
		observe(payload, m.ObserveReview)
	case events.EventAgentUsage:
		observe(payload, m.ObserveUsage)
	case events.EventRunStatus:
		observe(payload, m.ObserveRunStatus)
	case events.EventContextCost:
		observe(payload, m.ObserveContextCost)
	case events.EventDoctorCall:
		observe(payload, func(p events.DoctorCall) { m.recovery.doctor.WithLabelValues(p.Tier, p.Action).Inc() })
	case events.EventReplan:
		observe(payload, func(p events.Replan) { m.recovery.replans.WithLabelValues(replanOutcome(p.Outcome)).Inc() })
	case events.EventStuckDecision:
		observe(payload, func(p events.StuckDecision) { m.recovery.stuck.WithLabelValues(p.Decision).Inc() })
	case events.EventBudgetWarning:
		m.recovery.budget.Inc()
	case events.EventLaneStarted:
		m.agent.laneRunning.Inc()
	case events.EventLaneFinished:
		observe(payload, m.ObserveLaneFinished)
	}
}

// observe calls f with payload's value (or what it points to) when it
// is a T.
func observe[T any](payload any, f func(T)) {
	if p, ok := asValue[T](payload); ok {
		f(p)
	}
}

func asValue[T any](payload any) (T, bool) {
	switch p := payload.(type) {
	case T:
		return p, true
	case *T:
		if p != nil {
			return *p, true
		}
	}
	var zero T
	return zero, false
}

// ObservePhase counts one phase attempt's outcome and duration.
func (m *Metrics) ObservePhase(p events.PhaseFinished) {
	outcome := p.Outcome
	switch outcome {
	case events.OutcomeCompleted, events.OutcomeRetried, events.OutcomeFailed, events.OutcomeHalted:
	default:
		outcome = "other"
	}
	m.phase.outcomes.WithLabelValues(outcome).Inc()
	m.phase.duration.WithLabelValues(outcome).Observe(p.Duration.Seconds())
	if outcome != events.OutcomeRetried && p.Iteration > 0 {
		m.phase.iterations.Observe(float64(p.Iteration))
	}
	m.phase.lanes.Observe(float64(max(p.Lanes, 1)))
}

// ObserveLaneFinished counts one lane's session that ended and takes it
// off the running ones.
func (m *Metrics) ObserveLaneFinished(l events.LaneSession) {
	status := l.Status
	switch status {
	case events.LaneDone, events.LaneFailed, events.LaneStopped:
	default:
		status = "other"
	}
	m.agent.laneSessions.WithLabelValues(status).Inc()
	m.agent.laneRunning.Dec()
}

// ObserveReview counts one reviewer verdict.
func (m *Metrics) ObserveReview(r events.Review) {
	v := "rejected"
	if r.Approved {
		v = "approved"
	}
	m.phase.verdicts.WithLabelValues(v).Inc()
}

// ObserveUsage adds one agent session's tokens and cost.
func (m *Metrics) ObserveUsage(u events.AgentUsage) {
	role, model := orUnknown(u.Role), orUnknown(u.Model)
	m.agent.sessions.WithLabelValues(role, model).Inc()
	m.agent.tokens.WithLabelValues(role, model, "input").Add(nonNegative(float64(u.InputTokens)))
	m.agent.tokens.WithLabelValues(role, model, "output").Add(nonNegative(float64(u.OutputTokens)))
	m.agent.tokens.WithLabelValues(role, model, "cached").Add(nonNegative(float64(u.CachedTokens)))
	m.agent.cost.WithLabelValues(role, model).Add(nonNegative(u.CostUSD))
	if u.Expansions > 0 {
		m.agent.expansions.Add(float64(u.Expansions))
	}
}

// ObserveContextCost counts context management going over its share.
func (m *Metrics) ObserveContextCost(c events.ContextCost) {
	m.agent.contextOver.Inc()
	m.agent.contextShare.Set(nonNegative(c.Share))
}

// ObserveRunStatus moves one run from status From ("" for a new run) to To.
func (m *Metrics) ObserveRunStatus(s events.RunStatus) {
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	if s.From == s.To {
		return
	}
	if s.From != "" && m.runs.counts[s.From] > 0 {
		m.runs.counts[s.From]--
	}
	if s.To != "" {
		m.runs.counts[s.To]++
	}
	m.runs.publish(s.From, s.To)
}

// ObserveCheckpointWrite records one checkpoint write's latency; the
// instrumented Store calls it. Once the runtime's CheckpointSaved events
// carry durations, they time the writes and this does nothing, so no write
// is counted twice.
func (m *Metrics) ObserveCheckpointWrite(d time.Duration) {
	if m.checkpoint.timedByEvents.Load() {
		return
	}
	m.checkpoint.latency.Observe(d.Seconds())
}

// SetQueueLength sets the number of runs queued in gaffer serve's file
// pool (gaffer_serve_queue_length{queue="local"}).
func (m *Metrics) SetQueueLength(n int) { m.serve.queue.setLength(n) }

// SetQueueOldest sets when the oldest run queued in gaffer serve's file
// pool began to wait, the zero time when none is queued:
// gaffer_serve_queue_oldest_age_seconds{queue="local"} is its age when
// scraped (0 for the zero time). Until the first call the gauge has no
// series.
func (m *Metrics) SetQueueOldest(since time.Time) { m.serve.queue.setOldest(since) }

// SetWorkers sets the number of serve workers configured and busy.
func (m *Metrics) SetWorkers(total, busy int) {
	m.serve.workers.Set(float64(total))
	m.serve.busy.Set(float64(busy))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func nonNegative(f float64) float64 {
	if f < 0 {
		return 0
	}
	return f
}

// newCounter makes the counter name, described by help.
func newCounter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// newCounterVec makes the counter name with the labels, described by help.
func newCounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// newGauge makes the gauge name, described by help.
func newGauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// newGaugeVec makes the gauge name with the labels, described by help.
func newGaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

// newHistogram makes the histogram name with the buckets, described by help.
func newHistogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
}

// newHistogramVec makes the histogram name with the buckets and labels,
// described by help.
func newHistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}
