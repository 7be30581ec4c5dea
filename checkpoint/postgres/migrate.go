package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded SQL file, NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations by version.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("checkpoint: postgres: migration %s is not named NNNN_name.sql", base)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("checkpoint: postgres: migration %s out of sequence (want version %d)", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the newest schema version this program knows: the
// number of its embedded migrations.
func SchemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// lockKey is the advisory lock that serializes migrations of one schema.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("gaffer.checkpoint.migrate:" + schema))
	return int64(h.Sum64())
}

// migrate brings the schema up to date: under an advisory lock held on one
// connection, it applies each missing migration in a transaction of its
// own that also records the version in schema_migrations. Processes that
// open an empty database at once wait for each other's lock; the first
// applies, the others find nothing left to do.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema, name string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: postgres store %s: %w", name, err)
	}
	defer conn.Release()
	key := lockKey(schema)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return fmt.Errorf("checkpoint: postgres store %s: lock for migrations: %w", name, err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key); err != nil {
			conn.Conn().Close(context.Background()) // closing the session drops the lock
		}
	}()
	have, err := appliedVersion(ctx, conn.Conn(), schema, name)
	if err != nil {
		return err
	}
	if have > len(ms) {
		return &NewerError{Store: name, Version: have, Known: len(ms)}
	}
	for _, m := range ms[have:] {
		err := pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("checkpoint: postgres store %s: migration %s: %w", name, m.name, err)
		}
	}
	return nil
}

// appliedVersion creates the schema and its schema_migrations table when
// missing and returns the newest version applied. A schema that holds
// tables but no schema_migrations is someone else's: ErrForeignStore.
func appliedVersion(ctx context.Context, conn *pgx.Conn, schema, name string) (int, error) {
	var tables int
	var hasMigrations bool
	err := conn.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(tablename = 'schema_migrations'), false)
		FROM pg_tables WHERE schemaname = $1`, schema).Scan(&tables, &hasMigrations)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: postgres store %s: %w", name, err)
	}
	if tables > 0 && !hasMigrations {
		return 0, fmt.Errorf("%w: postgres store %s: schema %s holds %d tables and no schema_migrations; give gaffer a schema of its own",
			checkpoint.ErrForeignStore, name, schema, tables)
	}
	if !hasMigrations {
		ident := pgx.Identifier{schema}.Sanitize()
		_, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+ident+`;
			CREATE TABLE IF NOT EXISTS `+ident+`.schema_migrations (
				version    integer PRIMARY KEY,
				name       text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now()
			)`)
		if err != nil {
			return 0, fmt.Errorf("checkpoint: postgres store %s: create schema %s: %w", name, schema, err)
		}
	}
	var have int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&have); err != nil {
		return 0, fmt.Errorf("checkpoint: postgres store %s: %w", name, err)
	}
	return have, nil
}
