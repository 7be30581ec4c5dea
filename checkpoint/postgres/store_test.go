package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/checkpointtest"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Store { return open(t, pgtest.URL(t)) })
}

// openEnv names the database TestOpenProcess opens when run as a child.
const openEnv = "GAFFER_PGTEST_OPEN"

// TestOpenProcess is the child of TestConcurrentOpen: it opens the store
// once and exits.
func TestOpenProcess(t *testing.T) {
	url := os.Getenv(openEnv)
	if url == "" {
		t.Skip("run by TestConcurrentOpen")
	}
	open(t, url).Close()
}

// TestConcurrentOpen opens an empty database from 8 processes at once:
// the migrations run once, under the advisory lock, and every open
// succeeds.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.URL(t)
	const procs = 8
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), openEnv+"="+url)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("process %d: %v\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n, max int
	if err := conn.QueryRow(context.Background(), "SELECT count(*), max(version) FROM gaffer.schema_migrations").Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	if n != postgres.SchemaVersion() || max != postgres.SchemaVersion() {
		t.Fatalf("schema_migrations has %d rows up to version %d, want one per version up to %d", n, max, postgres.SchemaVersion())
	}
	// And goroutines of one process, each with its own pool.
	stores := make([]*postgres.Store, procs)
	for i := range procs {
		wg.Go(func() {
			stores[i], errs[i] = postgres.Open(context.Background(), url, postgres.Options{Schema: "other"})
		})
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		s.Close()
	}
}

// TestNewerDatabase refuses a database a newer gaffer migrated, in one
// line that matches checkpoint.ErrForeignStore (the cli's exit 8).
func TestNewerDatabase(t *testing.T) {
	url := pgtest.URL(t)
	open(t, url).Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	next := postgres.SchemaVersion() + 1
	if _, err := conn.Exec(context.Background(), "INSERT INTO gaffer.schema_migrations (version, name) VALUES ($1, 'future')", next); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(context.Background(), url, postgres.Options{})
	var newer *postgres.NewerError
	if !errors.As(err, &newer) || !errors.Is(err, checkpoint.ErrForeignStore) || newer.Version != next {
		t.Fatalf("Open of a newer database = %v, want *NewerError matching ErrForeignStore", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, fmt.Sprintf("schema version %d", next)) {
		t.Fatalf("error %q is not one line naming the version", msg)
	}
}

// TestForeignSchema refuses a schema that holds someone else's tables.
func TestForeignSchema(t *testing.T) {
	url := pgtest.URL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE SCHEMA app; CREATE TABLE app.users (id int)"); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(context.Background(), url, postgres.Options{Schema: "app"})
	if !errors.Is(err, checkpoint.ErrForeignStore) {
		t.Fatalf("Open of a foreign schema = %v, want ErrForeignStore", err)
	}
}
