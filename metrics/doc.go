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
// # The serve queue's gauges
//
// gaffer_serve_queue_length and gaffer_serve_queue_oldest_age_seconds
// carry a queue label saying whose queue they measure. serve's file pool
// holds its own queue (queue="local"): it sets the length and the time
// its oldest job began to wait as jobs come and go (SetQueueLength,
// SetQueueOldest), and the age is measured from that time when scraped.
// The PostgreSQL queue is every host's (queue="shared"), so no host can
// count it that way: it gives ProbeQueue a QueueProbe, and each scrape
// (at most one a second) reads the queue's length and the age of its
// oldest job from the database, for at most ProbeTimeout. A read that
// fails fails no scrape: the gauges keep their last values and one
// warning is logged until the database answers again. Every host of one
// database reports the same queue: sum the local gauges across processes,
// and take the max of the shared ones across the hosts of one database.
// The workers gauges are each process's own.
//
// # The runs' gauges
//
// gaffer_runs and gaffer_pending_approvals carry a store label saying
// whose runs they count, the same way. A process that holds its store (a
// store directory) counts its runs itself (store="local"): SetRuns when
// it opens the store, then the run_status events. A database store is
// every host's (store="shared"): gaffer serve gives ProbeRuns a RunsProbe
// and each scrape (at most one a second, for at most ProbeTimeout) counts
// the store's runs by status, a read that fails keeping the last counts.
// Sum the local gauges across processes, and take the max of the shared
// ones across the hosts of one database.
//
// # Metrics
//
// Every metric New registers, with its labels; a test compares this list
// (and the README's table) with the registry.
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
//	gaffer_phase_lanes                               lanes of each phase attempt that ended (1 for a phase of one)
//	gaffer_checkpoints_saved_total                   checkpoints written
//	gaffer_checkpoint_write_seconds                  checkpoint write latency
//	gaffer_checkpoint_size_bytes                     encoded state size of a checkpoint
//	gaffer_runs{status,store}                        workflow runs by status: local (this process's store) or shared (a database's, every host's)
//	gaffer_pending_approvals{store}                  runs awaiting approval, local or shared as gaffer_runs
//	gaffer_agent_sessions_total{role,model}          agent sessions
//	gaffer_agent_tokens_total{role,model,kind}       tokens by kind: input, output, cached
//	gaffer_agent_cost_usd_total{role,model}          agent cost in US dollars
//	gaffer_context_cost_over_limit_total             times context management went over 10% of a run's cost
//	gaffer_context_cost_share                        context management's share of the cost of the run that last went over
//	gaffer_lane_sessions_running                     developer sessions of a phase's lanes running now
//	gaffer_lane_sessions_total{status}               lanes' developer sessions that ended: done, failed, stopped
//	gaffer_story_expansions_total                    expansions of an earlier phase's Task Story records (seed 004's escape hatch)
//	gaffer_serve_queue_length{queue}                 runs queued in gaffer serve: local (the file pool's) or shared (a database's, every host's)
//	gaffer_serve_queue_oldest_age_seconds{queue}     how long the oldest queued run has waited since it was submitted, answered or put back
//	gaffer_serve_workers_busy                        serve workers executing a run
//	gaffer_serve_workers                             serve workers configured
//	gaffer_doctor_calls_total{tier,action}           Doctor calls by tier (cheap, strong) and the action advised
//	gaffer_replans_total{outcome}                    replanner answers: accepted, refused (narrows the phase), no_revision
//	gaffer_stuck_decisions_total{decision}           stuck handler decisions: stop, needs_human, reduce_scope, replan, escalate_model
//	gaffer_budget_warnings_total                     runs that spent 80% of their budget
package metrics
