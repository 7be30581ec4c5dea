// Package pool is serve's host.Service: a Pool queues the runs it is
// asked to start, resume or answer, and its workers execute them with the
// operations of the Host that holds the store, the ones a terminal calls
// (Start, Resume, Answer, Cancel); reads go to the Host, a run still in
// the queue told as queued or starting. Its queue is the file journal
// beside a store directory (package serve), whose job specs are tagged
// and versioned (jobspec.go: a journal of any earlier version recovers),
// or on a PostgreSQL store the database's jobs table that the serves of
// many hosts claim from, each under its host id (multihost.go, package
// serve/pgqueue). What stopped a run for the machine's fault (a full disk,
// an unreachable database or model provider) puts it back in the queue;
// a run its holders kept stopping with is failed.
package pool
