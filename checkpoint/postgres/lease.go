package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// acquire takes the lease in one statement, judged by the database's
// clock: it is free (never held, released or expired), already the
// owner's (a renewal, keeping the token), or held under token $6, the
// token of a holder Acquire found dead. A lease that changes hands takes
// the next value of the lease_tokens sequence.
const acquire = `INSERT INTO runs AS r (run_id, lease_owner, lease_pid, lease_host, lease_token, lease_expires)
VALUES ($1, $2, $3, $4, nextval('lease_tokens'), now() + $5::bigint * interval '1 microsecond')
ON CONFLICT (run_id) DO UPDATE SET
	lease_token = CASE WHEN r.lease_owner = excluded.lease_owner THEN r.lease_token ELSE excluded.lease_token END,
	lease_owner = excluded.lease_owner, lease_pid = excluded.lease_pid, lease_host = excluded.lease_host,
	lease_expires = excluded.lease_expires
WHERE r.lease_owner IS NULL OR r.lease_owner = excluded.lease_owner OR r.lease_expires <= now() OR r.lease_token = $6
RETURNING lease_token, lease_expires`

// acquireAttempts bounds Acquire's rounds: a holder that leaves between
// the statements makes one more.
const acquireAttempts = 5

// Acquire implements checkpoint.Store.
func (s *Store) Acquire(ctx context.Context, runID string, owner checkpoint.Owner, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if ttl <= 0 {
		return checkpoint.Lease{}, fmt.Errorf("%w: lease ttl %v must be positive", checkpoint.ErrInvalid, ttl)
	}
	if owner.ID == "" {
		return checkpoint.Lease{}, fmt.Errorf("%w: lease owner has no ID", checkpoint.ErrInvalid)
	}
	var dead int64 // token of a holder found dead on this host
	for range acquireAttempts {
		l := checkpoint.Lease{RunID: runID, Owner: owner}
		var token int64
		err := s.pool.QueryRow(ctx, acquire, []byte(runID), owner.ID, int32(owner.PID), owner.Host, ttl.Microseconds(), dead).
			Scan(&token, &l.Expires)
		if err == nil {
			l.Token = uint64(token)
			return l, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return checkpoint.Lease{}, s.wrap("acquire lease of run "+runID, err)
		}
		var holder checkpoint.Owner
		var pid int32
		var held *int64
		err = s.pool.QueryRow(ctx, `SELECT coalesce(lease_owner, ''), coalesce(lease_pid, 0), coalesce(lease_host, ''), lease_token
			FROM runs WHERE run_id = $1 AND lease_expires > now()`, []byte(runID)).Scan(&holder.ID, &pid, &holder.Host, &held)
		if errors.Is(err, pgx.ErrNoRows) || held == nil {
			continue // left meanwhile
		}
		if err != nil {
			return checkpoint.Lease{}, s.wrap("acquire lease of run "+runID, err)
		}
		holder.PID = int(pid)
		if holder.Host == "" || holder.Host != owner.Host || s.opts.Alive(holder.PID) {
			return checkpoint.Lease{}, &checkpoint.LeaseHeldError{RunID: runID, Holder: holder}
		}
		dead = *held // the holder on this host is dead: take its lease
	}
	return checkpoint.Lease{}, fmt.Errorf("acquire lease of run %s: it changed hands %d times meanwhile: %w", runID, acquireAttempts, checkpoint.ErrConflict)
}

// Renew implements checkpoint.Store.
func (s *Store) Renew(ctx context.Context, lease checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	if err := s.check(ctx); err != nil {
		return checkpoint.Lease{}, err
	}
	if ttl <= 0 {
		return checkpoint.Lease{}, fmt.Errorf("%w: lease ttl %v must be positive", checkpoint.ErrInvalid, ttl)
	}
	l := lease
	err := s.pool.QueryRow(ctx, `UPDATE runs SET lease_expires = now() + $4::bigint * interval '1 microsecond'
		WHERE run_id = $1 AND lease_token = $2 AND lease_owner = $3 RETURNING lease_expires`,
		[]byte(lease.RunID), int64(lease.Token), lease.Owner.ID, ttl.Microseconds()).Scan(&l.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.Lease{}, fmt.Errorf("renew lease of run %s: %w", lease.RunID, checkpoint.ErrFenced)
	}
	if err != nil {
		return checkpoint.Lease{}, s.wrap("renew lease of run "+lease.RunID, err)
	}
	return l, nil
}

// Release implements checkpoint.Store.
func (s *Store) Release(ctx context.Context, lease checkpoint.Lease) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `UPDATE runs SET lease_owner = NULL, lease_pid = NULL, lease_host = NULL, lease_token = NULL, lease_expires = NULL
		WHERE run_id = $1 AND lease_token = $2 AND lease_owner = $3`, []byte(lease.RunID), int64(lease.Token), lease.Owner.ID)
	return s.wrap("release lease of run "+lease.RunID, err)
}

// Delete implements checkpoint.Store. It locks the run's row first, so a
// Put racing it either lands before (and is deleted) or finds no run.
func (s *Store) Delete(ctx context.Context, runID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE run_id = $1 FOR UPDATE`, []byte(runID)); err != nil {
			return err
		}
		for _, table := range []string{"writes", "checkpoints", "blobs", "runs"} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE run_id = $1", []byte(runID)); err != nil {
				return err
			}
		}
		return nil
	})
	s.blobs.forget(runID)
	return s.wrap("delete run "+runID, err)
}

// Prune implements checkpoint.Store. Under the run's row lock it removes
// the checkpoints (and their writes) older than the newest keep, then the
// blobs no remaining checkpoint refers to, and when it removed any it
// changes the run's blob generation, so that no Put relies on them.
func (s *Store) Prune(ctx context.Context, runID string, keep int) error {
	if keep < 1 {
		return fmt.Errorf("%w: prune run %s keeping %d checkpoints (must keep at least 1)", checkpoint.ErrInvalid, runID, keep)
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var latest int64
		err := tx.QueryRow(ctx, `SELECT latest FROM runs WHERE run_id = $1 FOR UPDATE`, []byte(runID)).Scan(&latest)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		below := latest - int64(keep) // seqs up to this go
		if below < 1 {
			return nil
		}
		for _, table := range []string{"writes", "checkpoints"} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE run_id = $1 AND seq <= $2", []byte(runID), below); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `DELETE FROM blobs b WHERE b.run_id = $1
			AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.run_id = $1 AND b.sum = ANY (c.refs))`, []byte(runID))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET blob_gen = nextval('stamps') WHERE run_id = $1`, []byte(runID))
		return err
	})
	return s.wrap("prune run "+runID, err)
}
