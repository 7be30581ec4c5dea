// Package pgqueue is serve's run queue in PostgreSQL (serve.Queue), for
// the serves of many hosts sharing one database store (--store
// postgres://…). Jobs are rows of the jobs table, in the store's schema
// and migration set (checkpoint/postgres/migrations/0002_jobs.sql,
// 0003_jobs_queued_at.sql and 0005_jobs_traceparent.sql: the submitter's
// trace context, which a job keeps through answers and takeovers). A
// worker claims the first queued row with SELECT … FOR UPDATE SKIP
// LOCKED, so concurrent claimers on any host never take one job twice,
// and holds it under a lease (claimed_by, lease_until) judged by the
// database's clock and renewed by a heartbeat. A host that dies loses its
// jobs once their leases expire: another host's claim takes the row over,
// marks the job Recovered and counts the takeover; a job taken over more
// than Config.MaxTakeovers times is not executed again but failed, naming
// its last holder (Config.Abandon fails the run itself). The run's
// checkpoint lease (checkpoint/postgres) fences the old holder's writes,
// should it come back. Workers wake on LISTEN/NOTIFY (channel
// gaffer_jobs, on a dedicated connection that reconnects) and poll every
// Config.Poll as well, so a notification lost (the listener's connection
// down, the server restarting) delays a job by at most one poll. Cancel
// sets the row's cancel flag and notifies gaffer_cancel: the executing
// host cancels the run at once, or at its next heartbeat; an answer is a
// job any host may claim. A Queue that is not started is a client: a
// command on any host submits, answers, cancels and reads through it.
// A started Queue reports this host's busy workers to Config.Gauges as
// its jobs start and end, and lets the gauges read the queue's length
// and the age of its oldest job (every host's, by the database's clock:
// Probe) when they are scraped (QueueProber).
package pgqueue
