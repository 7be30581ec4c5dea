package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// selectCheckpoints reads checkpoints with their blobs' data, in the order
// of their refs (NULL where a blob is missing), in one query.
const selectCheckpoints = `SELECT c.seq, c.record, c.refs,
	ARRAY(SELECT b.data FROM unnest(c.refs) WITH ORDINALITY AS u(sum, i)
		LEFT JOIN blobs b ON b.run_id = c.run_id AND b.sum = u.sum ORDER BY u.i)
FROM checkpoints c `

// query runs a selectCheckpoints query and decodes its rows.
func (s *Store) query(ctx context.Context, op, runID, where string, args ...any) ([]checkpoint.Checkpoint, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, selectCheckpoints+where, args...)
	if err != nil {
		return nil, s.wrap(op, err)
	}
	var out []checkpoint.Checkpoint
	var seq int64
	var rec []byte
	var refs, data [][]byte
	_, err = pgx.ForEachRow(rows, []any{&seq, &rec, &refs, &data}, func() error {
		cp, err := decode(runID, uint64(seq), rec, refs, data)
		out = append(out, cp)
		return err
	})
	if err != nil {
		var corrupt *checkpoint.CorruptError
		if errors.As(err, &corrupt) {
			return nil, err
		}
		return nil, s.wrap(op, err)
	}
	return out, nil
}

// Latest implements checkpoint.Store.
func (s *Store) Latest(ctx context.Context, runID string) (checkpoint.Checkpoint, error) {
	cps, err := s.query(ctx, "latest of run "+runID, runID,
		`WHERE c.run_id = $1 AND c.seq = (SELECT latest FROM runs WHERE run_id = $1)`, []byte(runID))
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	if len(cps) == 0 {
		return checkpoint.Checkpoint{}, fmt.Errorf("latest of run %s: %w", runID, checkpoint.ErrNotFound)
	}
	return cps[0], nil
}

// Get implements checkpoint.Store.
func (s *Store) Get(ctx context.Context, runID string, seq uint64) (checkpoint.Checkpoint, error) {
	cps, err := s.query(ctx, fmt.Sprintf("get run %s seq %d", runID, seq), runID,
		`WHERE c.run_id = $1 AND c.seq = $2`, []byte(runID), int64(seq))
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	if len(cps) == 0 {
		return checkpoint.Checkpoint{}, fmt.Errorf("get run %s seq %d: %w", runID, seq, checkpoint.ErrNotFound)
	}
	return cps[0], nil
}

// List implements checkpoint.Store.
func (s *Store) List(ctx context.Context, runID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	var limit *int64
	if opts.Limit > 0 {
		l := int64(opts.Limit)
		limit = &l
	}
	return s.query(ctx, "list run "+runID, runID,
		`WHERE c.run_id = $1 AND ($2::bigint = 0 OR c.seq < $2) ORDER BY c.seq DESC LIMIT $3`,
		[]byte(runID), int64(opts.Before), limit)
}

// Runs implements checkpoint.Store: runs with a checkpoint, the most
// recently written first.
func (s *Store) Runs(ctx context.Context) ([]checkpoint.RunInfo, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT r.run_id, r.latest, c.record, c.summary
	FROM runs r JOIN checkpoints c ON c.run_id = r.run_id AND c.seq = r.latest
	WHERE r.latest > 0 ORDER BY r.stamp DESC, r.run_id`)
	if err != nil {
		return nil, s.wrap("runs", err)
	}
	out := []checkpoint.RunInfo{}
	var id []byte
	var latest int64
	var rec, sum []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &latest, &rec, &sum}, func() error {
		info, err := summary(string(id), uint64(latest), rec)
		if sum != nil {
			info.Summary = append([]byte(nil), sum...)
		}
		out = append(out, info)
		return err
	})
	if err != nil {
		var corrupt *checkpoint.CorruptError
		if errors.As(err, &corrupt) {
			return nil, err
		}
		return nil, s.wrap("runs", err)
	}
	return out, nil
}

// Writes implements checkpoint.Store.
func (s *Store) Writes(ctx context.Context, runID string, seq uint64) ([]checkpoint.Write, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT task_id, idx, node, value FROM writes WHERE run_id = $1 AND seq = $2`, []byte(runID), int64(seq))
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("writes of run %s seq %d", runID, seq), err)
	}
	var out []checkpoint.Write
	var w checkpoint.Write
	var task []byte
	var idx int32
	_, err = pgx.ForEachRow(rows, []any{&task, &idx, &w.Node, &w.Value}, func() error {
		w.TaskID, w.Index = string(task), int(idx)
		out = append(out, w)
		w = checkpoint.Write{}
		return nil
	})
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("writes of run %s seq %d", runID, seq), err)
	}
	slices.SortFunc(out, func(a, b checkpoint.Write) int {
		return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Index, b.Index))
	})
	return out, nil
}
