package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/serve"
)

// claimSQL takes the first job that is queued, or running under a lease
// past the database's clock (its holder stopped renewing it: a takeover,
// counted, with the holder kept as last_holder), skipping rows another
// claimer has locked. The claim number identifies this claim in the
// statements that renew and finish it.
const claimSQL = `WITH next AS (
	SELECT run_id FROM jobs
	WHERE (state = 'queued' OR (state = 'running' AND lease_until < now())) AND NOT (run_id = ANY ($3::text[]))
	ORDER BY ord
	FOR UPDATE SKIP LOCKED
	LIMIT 1
)
UPDATE jobs j SET
	takeovers   = j.takeovers + CASE WHEN j.state = 'running' THEN 1 ELSE 0 END,
	last_holder = CASE WHEN j.state = 'running' THEN j.claimed_by ELSE j.last_holder END,
	recovered   = j.recovered OR j.state = 'running',
	state = 'running', claimed_by = $1, claim = j.claim + 1,
	lease_until = now() + $2::bigint * interval '1 microsecond'
FROM next WHERE j.run_id = next.run_id
RETURNING j.run_id, j.kind, coalesce(j.spec, ''), coalesce(j.answer, ''), j.recovered, j.takeovers, coalesce(j.last_holder, ''), j.cancel, j.claim,
	j.traceparent, j.tracestate`

// claimed is a job this host claimed.
type claimed struct {
	job        serve.Job
	claim      int64
	takeovers  int
	lastHolder string
	cancel     bool
}

// claim takes the next job for this host; ok is false when none is
// waiting (or the database did not answer: err).
func (q *Queue) claim(ctx context.Context) (c claimed, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	q.mu.Lock()
	passed := make([]string, 0, len(q.passed))
	for id := range q.passed {
		passed = append(passed, id)
	}
	q.mu.Unlock()
	var kind string
	var spec, answer []byte
	err = q.cfg.DB.QueryRow(ctx, claimSQL, q.cfg.HostID, q.cfg.Lease.Microseconds(), passed).
		Scan(&c.job.RunID, &kind, &spec, &answer, &c.job.Recovered, &c.takeovers, &c.lastHolder, &c.cancel, &c.claim, &c.job.TraceParent, &c.job.TraceState)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	c.job.Kind = serve.JobKind(kind)
	if len(spec) > 0 {
		c.job.Spec = spec
	}
	if len(answer) > 0 {
		c.job.Answer = answer
	}
	c.job.Group = q.cfg.Group
	if q.cfg.KeyOf != nil {
		c.job.Key = q.cfg.KeyOf(c.job)
	}
	return c, true, nil
}

// pass puts back a claimed job whose key is busy here, for another host
// (or this one, once one of its jobs ends), without notifying: this host
// passes it over until then.
func (q *Queue) pass(ctx context.Context, c claimed) {
	q.mu.Lock()
	q.passed[c.job.RunID] = true
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	_, err := q.cfg.DB.Exec(ctx, `UPDATE jobs SET state = 'queued', claimed_by = NULL, lease_until = NULL
		WHERE run_id = $1 AND claim = $2 AND claimed_by = $3`, c.job.RunID, c.claim, q.cfg.HostID)
	if err != nil {
		q.cfg.Logger.Warn("pgqueue: put back a job whose key is busy; its lease expires instead", "run", c.job.RunID, "err", err)
	}
}

// TakeoverError is the error of a job taken over more than MaxTakeovers
// times: its holders kept stopping with it.
type TakeoverError struct {
	RunID      string
	Takeovers  int
	Max        int
	LastHolder string
}

func (e *TakeoverError) Error() string {
	return fmt.Sprintf("run %s failed: taken over %d times (at most %d), the last time from host %s", e.RunID, e.Takeovers, e.Max, e.LastHolder)
}

// execute runs a claimed job and records how it ended.
func (q *Queue) execute(ctx context.Context, c claimed) {
	job := c.job
	log := q.cfg.Logger.With("run", job.RunID, "job", string(job.Kind), "host", q.cfg.HostID)
	if c.takeovers > q.cfg.MaxTakeovers {
		err := &TakeoverError{RunID: job.RunID, Takeovers: c.takeovers, Max: q.cfg.MaxTakeovers, LastHolder: c.lastHolder}
		log.Error("run taken over too often; it fails", "err", err)
		if q.cfg.Abandon != nil {
			if aerr := q.cfg.Abandon(ctx, job, err); aerr != nil {
				log.Error("pgqueue: fail the run", "err", aerr)
			}
		}
		q.finish(ctx, c, "failed", err.Error())
		q.done(job.RunID, err.Error())
		return
	}
	q.mu.Lock()
	if job.Key != "" && q.held[job.Key] != "" {
		q.mu.Unlock()
		q.pass(ctx, c)
		q.mu.Lock()
		q.busy--
		q.mu.Unlock()
		return
	}
	if job.Key != "" {
		q.held[job.Key] = job.RunID
	}
	jctx, cancel := context.WithCancelCause(ctx)
	q.active[job.RunID] = &active{job: job, claim: c.claim, cancel: cancel}
	q.gaugesLocked()
	q.mu.Unlock()
	if c.cancel {
		cancel(serve.ErrCancelled)
	}
	log.Info("run executing", "recovered", job.Recovered, "takeovers", c.takeovers)
	outcome, err := q.cfg.Executor.Execute(jctx, job)
	cause := context.Cause(jctx)
	cancel(nil)

	lastErr := ""
	switch {
	case errors.Is(cause, ErrLost) || errors.Is(err, checkpoint.ErrFenced):
		// Another host holds the run now (this one was paused or cut off
		// past its lease): no failure of the run, which goes on there.
		log.Warn("run taken over by another host; this host stopped its attempt", "err", err)
		q.done(job.RunID, "")
		return
	case errors.Is(cause, serve.ErrDrained) || (err != nil && ctx.Err() != nil):
		log.Info("run stopped for drain; another serve (or the next start) resumes it", "err", err)
		q.finish(ctx, c, "queued", "")
	case err != nil && q.cfg.Retry != nil && q.cfg.Retry(err):
		// Said once at WARN; the same error again (a holder paused for
		// longer than a retry, a database still down) at DEBUG.
		level := slog.LevelWarn
		q.mu.Lock()
		if q.lastErr[job.RunID] == err.Error() {
			level = slog.LevelDebug
		}
		q.mu.Unlock()
		log.Log(ctx, level, "run stopped by the machine or held elsewhere; serve tries it again", "err", err, "retry_in", q.cfg.RetryAfter.String())
		lastErr = err.Error()
		q.mu.Lock()
		q.paused = time.Now().Add(q.cfg.RetryAfter)
		q.retrying = err.Error()
		q.mu.Unlock()
		q.finish(ctx, c, "queued", "")
	case err != nil:
		log.Error("run failed", "err", err)
		lastErr = err.Error()
		q.finish(ctx, c, "failed", lastErr)
	case outcome == serve.OutcomeParked:
		log.Info("run waiting for approval")
		q.finish(ctx, c, "parked", "")
	default:
		log.Info("run finished")
		q.finish(ctx, c, "done", "")
	}
	q.mu.Lock()
	if q.paused.IsZero() || !time.Now().Before(q.paused) {
		q.retrying = ""
	}
	q.mu.Unlock()
	q.done(job.RunID, lastErr)
}

// done forgets an executed job and frees its slot.
func (q *Queue) done(runID, lastErr string) {
	q.mu.Lock()
	if a := q.active[runID]; a != nil && a.job.Key != "" && q.held[a.job.Key] == runID {
		delete(q.held, a.job.Key)
	}
	clear(q.passed) // a key is free again: the jobs passed over may fit now
	delete(q.active, runID)
	if lastErr != "" {
		q.lastErr[runID] = lastErr
	} else {
		delete(q.lastErr, runID)
	}
	q.busy--
	q.gaugesLocked()
	q.mu.Unlock()
	q.signal(q.cfg.Workers)
}

// finishWait bounds how long finish tries to record a job's end while
// the database does not answer; past it, the lease expires and another
// claim takes the job over.
const finishWait = 2 * time.Minute

// finish records how claim c ended: done deletes the row; queued
// releases it (recovered) for any host, notifying them; parked and
// failed keep it for Answer, Status and LastError. It tries again while
// the database does not answer; a row another host took meanwhile is
// left alone.
func (q *Queue) finish(ctx context.Context, c claimed, state, msg string) {
	sql := `UPDATE jobs SET state = $4, claimed_by = NULL, lease_until = NULL, cancel = false, error = nullif($5, '')
		WHERE run_id = $1 AND claim = $2 AND claimed_by = $3`
	args := []any{c.job.RunID, c.claim, q.cfg.HostID, state, msg}
	switch state {
	case "done":
		sql = `DELETE FROM jobs WHERE run_id = $1 AND claim = $2 AND claimed_by = $3`
		args = args[:3]
	case "queued":
		sql = `UPDATE jobs SET state = $4, queued_at = now(), claimed_by = NULL, lease_until = NULL, recovered = true, error = nullif($5, '')
			WHERE run_id = $1 AND claim = $2 AND claimed_by = $3 RETURNING pg_notify('` + jobsChannel + `', run_id)`
	}
	ctx = context.WithoutCancel(ctx)
	deadline := time.Now().Add(finishWait)
	delay := 50 * time.Millisecond
	for {
		sctx, cancel := context.WithTimeout(ctx, dbTimeout)
		_, err := q.cfg.DB.Exec(sctx, sql, args...)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			q.cfg.Logger.Error("pgqueue: record the job's end; its lease expires and a host takes it over", "run", c.job.RunID, "state", state, "err", err)
			return
		}
		time.Sleep(delay)
		delay = min(2*delay, time.Second)
	}
}

// heartbeat renews this host's row and its jobs' leases, and acts on what
// it reads back: a cancel flag cancels the run (the polling behind
// LISTEN/NOTIFY), a job no longer this host's (its lease expired and
// another host took it) is stopped.
func (q *Queue) heartbeat(ctx context.Context) {
	defer q.bg.Done()
	every := min(q.cfg.Lease/3, q.cfg.Poll)
	name, _ := os.Hostname()
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		q.beat(ctx, name)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (q *Queue) beat(ctx context.Context, hostname string) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	lease := q.cfg.Lease.Microseconds()
	_, err := q.cfg.DB.Exec(ctx, `INSERT INTO serve_hosts (host_id, hostname, pid, lease_until)
		VALUES ($1, $2, $3, now() + $4::bigint * interval '1 microsecond')
		ON CONFLICT (host_id) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid, lease_until = excluded.lease_until`,
		q.cfg.HostID, hostname, int32(os.Getpid()), lease)
	if err != nil {
		if ctx.Err() == nil {
			q.cfg.Logger.Warn("pgqueue: heartbeat", "err", err)
		}
		return
	}
	q.mu.Lock()
	var ids []string
	var claims []int64
	for id, a := range q.active {
		ids, claims = append(ids, id), append(claims, a.claim)
	}
	q.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	rows, err := q.cfg.DB.Query(ctx, `UPDATE jobs j SET lease_until = now() + $2::bigint * interval '1 microsecond'
		FROM unnest($3::text[], $4::bigint[]) AS a(run_id, claim)
		WHERE j.run_id = a.run_id AND j.claim = a.claim AND j.claimed_by = $1 AND j.state = 'running'
		RETURNING j.run_id, j.cancel`, q.cfg.HostID, lease, ids, claims)
	if err != nil {
		q.cfg.Logger.Warn("pgqueue: heartbeat", "err", err)
		return
	}
	held := map[string]bool{}
	cancelled := map[string]bool{}
	for rows.Next() {
		var id string
		var c bool
		if err := rows.Scan(&id, &c); err != nil {
			rows.Close()
			return
		}
		held[id], cancelled[id] = true, c
	}
	rows.Close()
	if rows.Err() != nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, id := range ids {
		a := q.active[id]
		if a == nil || a.claim != claims[i] {
			continue // ended meanwhile
		}
		switch {
		case !held[id]:
			a.cancel(ErrLost)
		case cancelled[id]:
			a.cancel(serve.ErrCancelled)
		}
	}
}

// listen waits for notifications on a dedicated connection: a job queued
// wakes the workers, a cancel cancels the run if it executes here. It
// reconnects when the connection fails, and wakes the workers then (a
// notification may have been lost meanwhile).
func (q *Queue) listen(ctx context.Context) {
	defer q.bg.Done()
	delay := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := q.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		q.cfg.Logger.Debug("pgqueue: listener reconnects", "err", err)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func (q *Queue) listenOnce(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, dbTimeout)
	conn, err := pgx.ConnectConfig(cctx, q.cfg.DB.Config().ConnConfig.Copy())
	if err == nil {
		_, err = conn.Exec(cctx, "LISTEN "+jobsChannel+"; LISTEN "+cancelChannel)
	}
	cancel()
	if err != nil {
		if conn != nil {
			conn.Close(context.Background())
		}
		return err
	}
	defer conn.Close(context.Background())
	q.signal(q.cfg.Workers)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case jobsChannel:
			q.signal(q.cfg.Workers)
		case cancelChannel:
			q.mu.Lock()
			if a := q.active[n.Payload]; a != nil {
				a.cancel(serve.ErrCancelled)
			}
			q.mu.Unlock()
		}
	}
}
