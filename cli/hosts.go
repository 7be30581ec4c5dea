package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/host/pool"
)

// serve on many hosts: with --store postgres://… the serves of any number
// of hosts share one database, claiming runs from its jobs table (package
// serve/pgqueue) under their host ids, and a command with no serve on its
// own host to answer on the socket goes through the database instead.

// hostIDFlag names a serve among the hosts sharing a database store.
const hostIDFlag = "host-id"

// remoteFlag names the shared remote the runs' branches are pushed to.
const remoteFlag = "remote"

// serveHostFlags are serve's flags for a database store.
func serveHostFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: hostIDFlag, EnvVars: []string{"GAFFER_HOST_ID"},
			Usage: "with --store postgres://…: this serve's name among the hosts sharing the database (default HOSTNAME-PID); given, the serve keeps its socket, logs and agents' process groups in .git/gaffer/hosts/ID, so that several serves may share one repository"},
		&ucli.DurationFlag{Name: "queue-lease", EnvVars: []string{"GAFFER_QUEUE_LEASE"},
			Usage: "with --store postgres://…: how long a run this serve claimed stays its own without a heartbeat; a serve that dies loses its runs to the others once it passes (default 30s)"},
		&ucli.StringFlag{Name: remoteFlag, EnvVars: []string{"GAFFER_REMOTE"},
			Usage: "with --store postgres://…: the shared git remote (URL or path) each run's branch gaffer/RUN-ID is pushed to, commit by commit, so that a serve on any host may take a run over; this serve keeps a mirror of it and clones each run from it (default: none, nothing is pushed)"},
	}
}

// serveHosts reads serve's host flags: the host config of its pool, and
// the local directory of a serve with a --host-id on a database store
// ("" for storeOf's).
func serveHosts(c *ucli.Context) (pool.HostsConfig, string, error) {
	hc := pool.HostsConfig{ID: c.String(hostIDFlag), Lease: c.Duration("queue-lease")}
	if hc.Lease < 0 {
		return hc, "", usageErrorf("--queue-lease %v: want a positive duration", hc.Lease)
	}
	if hc.ID == "" {
		return hc, "", nil
	}
	if strings.ContainsAny(hc.ID, "/\\\x00") || hc.ID == "." || hc.ID == ".." {
		return hc, "", usageErrorf("--%s %q: want a name without slashes", hostIDFlag, hc.ID)
	}
	dir, g, err := storeOf(c)
	if err != nil || !hoststore.IsURL(g.Store) {
		return hc, "", err
	}
	return hc, filepath.Join(dir, "hosts", hc.ID), nil
}

// viaDatabase is the service of a command on a database store that no
// process on this host answers for: when a serve is alive on any host,
// the store opened beside it without the local lock (host.Config.Shared),
// with a client pool that queues, answers and cancels through the
// database. nil when the store is a directory or no serve is alive: the
// command opens the store itself, as ever.
func viaDatabase(c *ucli.Context, io IO) (host.Service, func(), error) {
	_, g, err := storeOf(c)
	if err != nil || !hoststore.IsURL(g.Store) {
		return nil, nil, err
	}
	l, err := openHost(c, io, hostOptions{shared: true})
	if err != nil {
		return nil, nil, err
	}
	n, err := pool.ServingHosts(c.Context, l.Host)
	if err != nil || n == 0 {
		l.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read the serves of the database: %w", err)
		}
		return nil, nil, nil
	}
	p, err := pool.New(l.Host, pool.Config{Client: true, Logger: l.log})
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return p, func() { _ = l.Close() }, nil
}
