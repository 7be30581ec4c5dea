package hoststore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
	"github.com/gaffer-dev/gaffer/host"
)

// IsURL reports whether store names a database (postgres:// or
// postgresql://) rather than a store directory.
func IsURL(store string) bool { return postgres.IsURL(store) }

var errHeld = errors.New("held by another process")

// openURLStore opens the PostgreSQL store at url for a host whose local
// directory (socket, groups, logs, journal beside it) is dir. The database
// may be shared; the local directory is this host's, so the host takes an
// exclusive lock on dir/LOCK (holding its pid, as Badger's LOCK does)
// that keeps one gaffer process per local directory, as the Badger store's
// own lock does. Without lock (host.Config.Shared) it takes none. It returns
// the store and what closes both.
func openURLStore(ctx context.Context, url, dir string, lock bool, outageWait time.Duration) (checkpoint.Store, func() error, error) {
	if !lock {
		store, err := openPostgres(ctx, url, outageWait)
		if err != nil {
			return nil, nil, err
		}
		return store, store.Close, nil
	}
	lockFile, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	if err := flock(lockFile.Fd()); err != nil {
		lockFile.Close()
		if errors.Is(err, errHeld) {
			return nil, nil, errorf(host.Held, "store %s is in use by %s; wait for it to finish or stop it", dir, lockHolder(dir))
		}
		return nil, nil, fmt.Errorf("open store: lock %s: %w", dir, err)
	}
	_ = lockFile.Truncate(0)
	_, _ = lockFile.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	store, err := openPostgres(ctx, url, outageWait)
	if err != nil {
		lockFile.Close()
		return nil, nil, err
	}
	return store, func() error {
		err := store.Close()
		lockFile.Close()
		return err
	}, nil
}

// openPostgres opens the database store at url.
func openPostgres(ctx context.Context, url string, outageWait time.Duration) (*postgres.Store, error) {
	store, err := postgres.Open(ctx, url, postgres.Options{OutageWait: outageWait})
	if err != nil {
		if errors.Is(err, checkpoint.ErrForeignStore) {
			return nil, &host.Error{Code: host.Refused, Err: err} // one line naming the database and the fix
		}
		return nil, fmt.Errorf("open store %s: %w", postgres.Redact(url), err)
	}
	return store, nil
}
