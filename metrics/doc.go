// Package metrics holds gaffer's Prometheus collectors and the HTTP handler
// that serves them.
//
// # Contract
//
// The workflow's nodes report what happened through graph.Emit with the
// event names and payload types of package events (phase_finished, review,
// agent_usage, run_status, context_cost and recovery's); metrics only
// subscribes to them. The runtime's own events (node started and
// finished, retries, checkpoints saved, runs started and finished) need no
// emitting: New returns a *Metrics whose Observe method is passed to
// graph.Runner.Subscribe and turns every event into metric updates.
//
// Collectors are registered on the prometheus.Registerer given to New, never
// on a global registry. Every metric is named gaffer_<what>_<unit>, and no
// label carries a run id or a phase number: label values come from small,
// fixed sets (node names, outcomes, statuses, roles, models).
//
// # Serving
//
// Handler serves /metrics (promhttp on a Gatherer), /healthz (the process is
// up) and /readyz (a caller-supplied check, such as "the store is open").
// Listen binds an address to 127.0.0.1 unless the address names a host.
//
// # A queue shared by many hosts
//
// serve's file pool sets the queue length as jobs come and go. The
// PostgreSQL queue is every host's, so no host can count it that way: it
// gives ProbeQueue a QueueProbe, and each scrape (at most one a second)
// reads the queue's length and the age of its oldest job from the
// database, for at most ProbeTimeout. A read that fails fails no scrape:
// the gauges keep their last values and one warning is logged until the
// database answers again. Every host reports the same queue: aggregate
// its gauges across hosts with max, not sum. The workers gauges stay each
// host's own.
//
// # Metrics
//
//	gaffer_node_transitions_total{node,outcome}      node attempts by outcome (ok, error, interrupted)
//	gaffer_node_duration_seconds{node,outcome}       node attempt duration
//	gaffer_node_retries_total{node}                  failed attempts that will be retried
//	gaffer_graph_runs_started_total{mode}            Run (mode="run") and Resume (mode="resume") calls
//	gaffer_graph_runs_finished_total{status}         graph runs that stopped: done, interrupted, failed
//	gaffer_phase_outcomes_total{outcome}             phase attempts: completed, retried, failed, halted
//	gaffer_phase_duration_seconds{outcome}           phase attempt duration, agent start to verdict
//	gaffer_review_verdicts_total{verdict}            reviewer verdicts: approved, rejected
//	gaffer_phase_review_iterations                   review iterations a phase took to its final outcome
//	gaffer_checkpoints_saved_total                   checkpoints written
//	gaffer_checkpoint_write_seconds                  checkpoint write latency
//	gaffer_checkpoint_size_bytes                     encoded state size of a checkpoint
//	gaffer_runs{status}                              workflow runs by status
//	gaffer_pending_approvals                         runs awaiting approval
//	gaffer_agent_sessions_total{role,model}          agent sessions
//	gaffer_agent_tokens_total{role,model,kind}       tokens by kind: input, output, cached
//	gaffer_agent_cost_usd_total{role,model}          agent cost in US dollars
//	gaffer_serve_queue_length                        runs queued in gaffer serve (database store: every host's queue)
//	gaffer_serve_queue_oldest_age_seconds            database store: how long the oldest queued run has waited
//	gaffer_serve_workers_busy                        serve workers executing a run
//	gaffer_serve_workers                             serve workers configured
package metrics
