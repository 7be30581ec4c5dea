// Package daemon composes gaffer's long-running service, what `gaffer
// serve` runs: on a Host its caller opened (package hoststore), a pool of
// workers (package pool) executes the queued runs, the control socket
// (package socket) serves other processes, /metrics, /healthz and /readyz
// report on them, the inbox (package inbox) serves its web pages when
// asked, and a signal drains it: no new work, running steps reach their
// checkpoint, leases are released. New makes the parts that must exist
// before the store opens (the metrics the store's writes are timed into,
// the inbox's listener); Run serves until its context ends. The command
// line only translates flags into a Config and a Daemon's errors into
// exit codes (nomad's command/agent split).
package daemon
