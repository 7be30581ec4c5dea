package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Options configures Open. The zero value is usable.
type Options struct {
	// Schema is the PostgreSQL schema holding the store's tables (default
	// "gaffer"), so one database may hold several stores or other data.
	Schema string
	// BlobThreshold is the size over which a value is stored once per run
	// as a content-addressed blob (default 64 bytes).
	BlobThreshold int
	// MaxConns bounds the connection pool (default 16).
	MaxConns int32
	// Alive reports whether a lease holder's pid is alive on this host
	// (default: kill(pid, 0), as checkpoint.LeaseRules).
	Alive func(pid int) bool
	// OutageWait is how long a checkpoint write waits, retrying with
	// backoff, for a database that does not answer (down, restarting)
	// before it fails with checkpoint.ErrUnavailable (default
	// DefaultOutageWait).
	OutageWait time.Duration
}

// DefaultOutageWait is Options.OutageWait's default: longer than a
// server's crash and restart, short enough that a lasting outage stops
// the run (resumably) instead of holding it.
const DefaultOutageWait = 30 * time.Second

func (o Options) validate() (Options, error) {
	if o.Schema == "" {
		o.Schema = "gaffer"
	}
	if o.BlobThreshold == 0 {
		o.BlobThreshold = 64
	}
	if o.BlobThreshold < 0 {
		return o, fmt.Errorf("%w: blob threshold %d is negative", checkpoint.ErrInvalid, o.BlobThreshold)
	}
	if o.MaxConns == 0 {
		o.MaxConns = 16
	}
	if o.MaxConns < 0 {
		return o, fmt.Errorf("%w: max conns %d is negative", checkpoint.ErrInvalid, o.MaxConns)
	}
	if o.OutageWait == 0 {
		o.OutageWait = DefaultOutageWait
	}
	if o.OutageWait < 0 {
		return o, fmt.Errorf("%w: outage wait %v is negative", checkpoint.ErrInvalid, o.OutageWait)
	}
	o.Alive = checkpoint.LeaseRules{Alive: o.Alive}.WithDefaults().Alive
	return o, nil
}

// Store is a checkpoint.Store in a PostgreSQL database. It is safe for
// concurrent use, and any number of processes on any number of hosts may
// open the same database.
type Store struct {
	pool   *pgxpool.Pool
	opts   Options
	name   string // the URL without its password, and the schema
	blobs  blobCache
	closed atomic.Bool
}

var _ checkpoint.Store = (*Store)(nil)

// IsURL reports whether store names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a directory.
func IsURL(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as libpq takes), brings its schema up to date and
// returns the store. A database whose schema is newer than this program's
// is refused with a *NewerError; a schema holding tables of something else
// with checkpoint.ErrForeignStore.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	opts, err := opts.validate()
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: postgres store: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	cfg.ConnConfig.RuntimeParams["application_name"] = "gaffer"
	s := &Store{opts: opts, name: Redact(url) + " (schema " + opts.Schema + ")"}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: postgres store %s: %w", s.name, err)
	}
	if err := migrate(ctx, s.pool, opts.Schema, s.name); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// Redact returns a database URL without its password, to name it in
// messages.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Pool is the store's connection pool, for tools and benchmarks that
// query the database beside the store (its search_path is the schema).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Name is the store's database URL (password hidden) and schema.
func (s *Store) Name() string { return s.name }

// Close implements checkpoint.Store. Later calls fail with
// checkpoint.ErrClosed; closing twice is a no-op.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.pool.Close()
	return nil
}

// check fails when ctx is done or the store closed.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return checkpoint.ErrClosed
	}
	return ctx.Err()
}

// wrap names the operation and the store in an error from the database.
func (s *Store) wrap(op string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if s.closed.Load() {
		return checkpoint.ErrClosed
	}
	if unreachable(err) {
		return fmt.Errorf("%w: postgres store %s: %s: %w", checkpoint.ErrUnavailable, s.name, op, err)
	}
	return fmt.Errorf("checkpoint: postgres store %s: %s: %w", s.name, op, err)
}

// unreachable reports whether err says the database could not be reached
// or is going down or coming up — no connection, a connection lost, the
// server's classes 08 (connection exception) and 57P (operator
// intervention: shutdown, crash, cannot connect now) — rather than an
// answer to the statement.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pgx.ErrNoRows) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08")
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || pgconn.SafeToRetry(err)
}

// ambiguous reports whether err may have left a write committed without
// telling us (the connection failed after the statement was sent), or is
// the server going down or coming up: either way the write is sent again.
func ambiguous(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// The server answered: it did not commit. It may be shutting
		// down or starting up (class 57P, 08): worth trying again.
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08")
	}
	return !errors.Is(err, pgx.ErrNoRows)
}
