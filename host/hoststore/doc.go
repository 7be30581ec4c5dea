// Package hoststore opens a Host on the store a configuration names: a
// store directory (Badger, locked by the process that opens it) or a
// PostgreSQL database (postgres://…) with a local directory beside it
// that this process locks instead. It maps what stops a store from
// opening to the host's refusals, one line naming the fix (another
// process holds it: host.Held with its pid; a damaged or foreign store:
// host.Refused; a full disk: host.Machine), keeps the store private to
// its user (0700, its files 0600), sweeps the temporary directories of
// killed gaffer processes, and, where the configuration asks for it,
// delivers the runs' notices (package notify) while the host is
// open. Package host itself opens no store: it works on one it is given.
package hoststore
