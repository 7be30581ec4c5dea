package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// The statement of a Put is one round trip: the run's row is updated only
// when the write's fencing token is the run's lease token and its parent is
// the run's latest seq, and the checkpoint and its new blobs are inserted
// only when it was. Updating the row takes its lock, so the row serializes
// the run's writes (a writer that waited re-checks the conditions against
// the row as the other left it). set_config(…, true) is SET LOCAL for this
// statement's transaction: synchronous_commit on for Sync, off otherwise;
// it sits in the WHERE clause so that it is evaluated whenever the row is
// written.
const (
	// putNext is a Put on a run that has a row: any Put with a parent or a
	// fence (a fence needs a lease, and a lease a row).
	putNext = `WITH run AS (
	UPDATE runs SET latest = $3, stamp = nextval('stamps')
	WHERE run_id = $1 AND latest = $2
		AND ($4::bigint = 0 OR lease_token = $4)
		AND ($5::bigint = 0 OR blob_gen = $5)
		AND set_config('synchronous_commit', $6, true) IS NOT NULL
	RETURNING run_id, blob_gen
)` + putTail

	// putFirst is the first Put of a run without a fence: it makes the
	// run's row, or takes one that has no checkpoint yet.
	putFirst = `WITH run AS (
	INSERT INTO runs AS r (run_id, latest, stamp)
	SELECT $1, $3, nextval('stamps')
	WHERE $2::bigint = 0 AND $4::bigint = 0 AND set_config('synchronous_commit', $6, true) IS NOT NULL
	ON CONFLICT (run_id) DO UPDATE SET latest = excluded.latest, stamp = excluded.stamp
	WHERE r.latest = 0 AND ($5::bigint = 0 OR r.blob_gen = $5)
	RETURNING run_id, blob_gen
)` + putTail

	putTail = `, new_blobs AS (
	INSERT INTO blobs (run_id, sum, data)
	SELECT run.run_id, b.sum, b.data FROM run, unnest($7::bytea[], $8::bytea[]) AS b(sum, data)
	ON CONFLICT DO NOTHING
), cp AS (
	INSERT INTO checkpoints (run_id, seq, refs, record, summary) SELECT run_id, $3, $9, $10, $11 FROM run
)
SELECT blob_gen FROM run`

	// putRefused reads why a Put wrote nothing.
	putRefused = `SELECT r.latest, r.lease_token, c.record, c.refs
	FROM runs r LEFT JOIN checkpoints c ON c.run_id = r.run_id AND c.seq = $2
	WHERE r.run_id = $1`
)

// putAttempts bounds how often Put sends its statement when the blobs it
// skipped as already stored were removed meanwhile; after a connection
// that failed (the answer lost, or the server down or restarting) it
// keeps sending it until Options.OutageWait has passed. Between attempts
// it backs off exponentially, putBackoff doubling up to putMaxBackoff:
// 50, 100, 200, 400, 800 ms and then every second.
const (
	putAttempts   = 10
	putBackoff    = 50 * time.Millisecond
	putMaxBackoff = time.Second
)

// putDelay is the pause before attempt (1-based after the first).
func putDelay(attempt int) time.Duration {
	d := putBackoff << (attempt - 1)
	if d > putMaxBackoff || d <= 0 {
		d = putMaxBackoff
	}
	return d
}

// Put implements checkpoint.Store.
func (s *Store) Put(ctx context.Context, cp checkpoint.Checkpoint, opts checkpoint.PutOptions) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	e, err := encode(cp, s.opts.BlobThreshold)
	if err != nil {
		return err
	}
	if cp.RunID == "" || cp.Seq != cp.Parent+1 {
		_, err := s.refused(ctx, cp, e, opts, false)
		return err
	}
	sql := putNext
	if cp.Parent == 0 && opts.Fence == 0 {
		sql = putFirst
	}
	syncCommit := "off"
	if opts.Sync {
		syncCommit = "on"
	}
	lost := false // an attempt's answer was lost: it may have committed
	var last error
	deadline := time.Now().Add(s.opts.OutageWait)
	for attempt := 0; attempt < putAttempts || (lost && time.Now().Before(deadline)); attempt++ {
		if attempt > 0 {
			select { // back off: the server may be restarting
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(putDelay(attempt)):
			}
		}
		gen, skip := s.blobs.known(cp.RunID, e.blobs)
		var sums, data [][]byte
		for i, b := range e.blobs {
			if skip == nil || !skip[i] {
				sums, data = append(sums, e.refs[i]), append(data, b.data)
			}
		}
		var got int64
		err := s.pool.QueryRow(ctx, sql, []byte(cp.RunID), int64(cp.Parent), int64(cp.Seq), int64(opts.Fence), gen, syncCommit,
			sums, data, e.refs, e.record, cp.Summary).Scan(&got)
		switch {
		case err == nil:
			s.blobs.remember(cp.RunID, got, e.blobs)
			return nil
		case errors.Is(err, pgx.ErrNoRows):
			if done, err := s.refused(ctx, cp, e, opts, lost); done {
				return err
			}
			// Nothing the caller did: the run's blobs changed under the
			// cache (a Prune), or the run did between the statements.
			s.blobs.forget(cp.RunID)
			last = fmt.Errorf("put run %s seq %d: %w", cp.RunID, cp.Seq, checkpoint.ErrConflict)
		case ambiguous(ctx, err):
			lost, last = true, err
		default:
			return s.wrap(fmt.Sprintf("put run %s seq %d", cp.RunID, cp.Seq), err)
		}
	}
	return s.wrap(fmt.Sprintf("put run %s seq %d", cp.RunID, cp.Seq), last)
}

// refused tells why a Put wrote nothing, with the rules every store shares:
// a stale fence, a taken seq (unless it holds this very record: the Put
// is a retry; lost says an earlier attempt's answer was lost, so even an
// unfenced one is) or a parent that is not the latest. done is false when
// none applies and the Put may be tried again.
func (s *Store) refused(ctx context.Context, cp checkpoint.Checkpoint, e encoded, opts checkpoint.PutOptions, lost bool) (done bool, err error) {
	var latest int64
	var token *int64
	var rec []byte
	var refs [][]byte
	err = s.pool.QueryRow(ctx, putRefused, []byte(cp.RunID), int64(cp.Seq)).Scan(&latest, &token, &rec, &refs)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return true, s.wrap(fmt.Sprintf("put run %s seq %d", cp.RunID, cp.Seq), err)
	}
	var lease *checkpoint.Lease
	if token != nil {
		lease = &checkpoint.Lease{RunID: cp.RunID, Token: uint64(*token)}
	}
	if err := checkpoint.CheckFence(cp.RunID, lease, opts.Fence); err != nil {
		return true, err
	}
	exists := rec != nil
	if exists && e.same(rec, refs) && (checkpoint.IsRetry(cp, opts.Fence, uint64(latest), true) || lost && cp.Seq == uint64(latest)) {
		return true, nil
	}
	if err := checkpoint.CheckPut(cp, uint64(latest), exists); err != nil {
		return true, err
	}
	return false, nil
}

// PutWrites implements checkpoint.Store: one statement that inserts the
// writes only when the fence holds and checkpoint seq exists, holding the
// run's row (FOR SHARE) so that a lease changing hands waits for it or it
// for the lease.
func (s *Store) PutWrites(ctx context.Context, runID string, seq uint64, writes []checkpoint.Write, opts checkpoint.PutOptions) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	tasks := make([][]byte, len(writes))
	idx := make([]int32, len(writes))
	nodes := make([]string, len(writes))
	values := make([][]byte, len(writes))
	for i, w := range writes {
		tasks[i], idx[i], nodes[i], values[i] = []byte(w.TaskID), int32(w.Index), w.Node, w.Value
	}
	syncCommit := "off"
	if opts.Sync {
		syncCommit = "on"
	}
	var ok bool
	var token *int64
	err := s.pool.QueryRow(ctx, `WITH run AS (
	SELECT r.run_id, r.lease_token FROM runs r
	WHERE r.run_id = $1 AND set_config('synchronous_commit', $4, true) IS NOT NULL
	FOR SHARE
), ok AS (
	SELECT run_id FROM run
	WHERE ($3::bigint = 0 OR lease_token = $3)
		AND EXISTS (SELECT 1 FROM checkpoints c WHERE c.run_id = $1 AND c.seq = $2)
), ins AS (
	INSERT INTO writes (run_id, seq, task_id, idx, node, value)
	SELECT ok.run_id, $2, w.task_id, w.idx, w.node, w.value
	FROM ok, unnest($5::bytea[], $6::integer[], $7::text[], $8::bytea[]) AS w(task_id, idx, node, value)
	ON CONFLICT DO NOTHING
)
SELECT EXISTS (SELECT 1 FROM ok), (SELECT lease_token FROM run)`,
		[]byte(runID), int64(seq), int64(opts.Fence), syncCommit, tasks, idx, nodes, values).Scan(&ok, &token)
	if err != nil {
		return s.wrap(fmt.Sprintf("put writes on run %s seq %d", runID, seq), err)
	}
	if ok {
		return nil
	}
	var lease *checkpoint.Lease
	if token != nil {
		lease = &checkpoint.Lease{RunID: runID, Token: uint64(*token)}
	}
	if err := checkpoint.CheckFence(runID, lease, opts.Fence); err != nil {
		return err
	}
	return fmt.Errorf("put writes on run %s seq %d: %w", runID, seq, checkpoint.ErrNotFound)
}

// blobCache remembers, per run, the blobs a Put of this store committed,
// so later Puts send only a reference to them (a loop's unchanged payload
// crosses the network once). The run's blob_gen changes whenever blobs of
// the run are removed; a Put that skipped blobs requires the generation it
// saw, so a stale cache costs one more attempt, never a dangling ref.
type blobCache struct {
	mu   sync.Mutex
	runs map[string]*runBlobs
}

type runBlobs struct {
	gen  int64
	sums map[[32]byte]bool
}

// maxCachedRuns bounds the cache; past it, it starts over.
const maxCachedRuns = 4096

// known returns the generation the cached blobs of run belong to (0 when
// none is skipped) and which of blobs need not be sent.
func (c *blobCache) known(runID string, blobs []blob) (int64, []bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.runs[runID]
	if r == nil || len(blobs) == 0 {
		return 0, nil
	}
	skip := make([]bool, len(blobs))
	some := false
	for i, b := range blobs {
		skip[i] = r.sums[b.sum]
		some = some || skip[i]
	}
	if !some {
		return 0, nil
	}
	return r.gen, skip
}

// remember records that blobs are stored for run at generation gen.
func (c *blobCache) remember(runID string, gen int64, blobs []blob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil || len(c.runs) >= maxCachedRuns {
		c.runs = make(map[string]*runBlobs)
	}
	r := c.runs[runID]
	if r == nil || r.gen != gen {
		r = &runBlobs{gen: gen, sums: make(map[[32]byte]bool)}
		c.runs[runID] = r
	}
	for _, b := range blobs {
		r.sums[b.sum] = true
	}
}

// forget drops what the cache knows of run.
func (c *blobCache) forget(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.runs, runID)
}
