// Package postgres is the checkpoint.Store kept in a PostgreSQL database
// (pgx v5), which any number of gaffer processes on any number of hosts
// may share: Open connects and migrates, and Store implements the contract
// of package checkpoint and passes checkpoint/checkpointtest. A run has one
// row in the runs table; every write of the run updates or locks that row
// in the statement that writes, so the row serializes the run's writes,
// and each Put is one statement and one round trip that checks the lease's
// fencing token and the expected parent seq before it inserts anything. It
// is a package of its own so that only programs that use PostgreSQL link
// pgx; its errors are checkpoint's.
//
// # Leases and fencing
//
// Lease tokens come from a database sequence, so they grow across every
// host. Expiry is judged by the database's clock (now()), never a host's:
// a host whose clock is off neither steals a live lease nor keeps a dead
// one. A holder paused past its lease (SIGSTOP, a long GC pause) whose run
// another owner took meanwhile writes nothing when it continues: its token
// is not the row's any more, and the statement that would write checks it
// (ErrFenced). A holder on the same host (Owner.Host) whose process is gone
// is replaced at once, as in every store.
//
// # Ambiguous commits
//
// A Put whose answer is lost (the connection failed after the statement
// was sent), or that finds the server going down or starting up, is sent
// again, backing off from 50 ms to 1 s, for about 5.5 s in all: long
// enough for a server's crash and restart. Finding its own identical record at that seq,
// it succeeds; a different record there is ErrConflict (see
// checkpoint.IsRetry, which applies the same rule to callers' retries).
//
// # Durability and size
//
// PutOptions.Sync sets synchronous_commit on for that write's transaction
// (SET LOCAL, as set_config(…, true) inside the statement) and its absence
// sets it off: an unsynced write may be lost with the server, never torn.
// Values over Options.BlobThreshold are stored once per run in the blobs
// table under their SHA-256; the store remembers which blobs of a run it
// committed and sends only their hashes afterwards, so a large value that
// does not change crosses the network and the disk once. A Prune that
// removes blobs changes the run's blob generation, which a Put relying on
// remembered blobs checks in its statement.
//
// # Schema and migrations
//
// The tables live in a schema of their own (Options.Schema, default
// "gaffer"). Migrations are SQL files embedded in the program
// (migrations/NNNN_name.sql); Open applies the missing ones in order under
// a PostgreSQL advisory lock, one transaction each, recording each version
// as a row of schema_migrations, so that processes opening an empty
// database at once all succeed. A database whose schema is newer than the
// program is refused with a one-line *NewerError, and a schema holding
// other tables with checkpoint.ErrForeignStore; both leave the database as
// it was. The set includes serve/pgqueue's run queue (the jobs and
// serve_hosts tables, 0002_jobs.sql), so that one schema version covers
// all gaffer keeps in the database. Tests get a real server from
// checkpoint/postgres/pgtest.
package postgres
