// Package host is the run host: the one service every front end of gaffer
// works through. A Host owns a store (Badger), the compiled workflow's
// runner on it, the runs it is driving now and their work trees' locks
// (each run works on its own branch in its own work tree beside the store,
// or with RunSpec.InPlace in the user's checkout: worktree.go), and
// offers typed operations — Start, Resume, Answer, Cancel, Status, List,
// History, Fork and Submit (the Service interface) — that return domain
// outcomes (a run completed, parked for a human, halted, stopped on an
// error, handed to the process that holds it; see Kind) and *Error for
// what they refuse (with a Code: held, refused, usage, …), never exit
// codes: front ends map those. The program around a host gives it a Setup
// (how a RunSpec becomes a run's first state, how drivers are made) and a
// Front (the person it works for: what it says, how a driven run's
// progress is shown, how a plan's approval is asked). The control socket
// serves a Service once per operation, typed and versioned ("v1.status"
// …, see Register and ProtocolVersion), and a Client implements the same
// Service over it, so a command does not know whether it runs locally or
// talks to the process holding the store: that process offers Holder (it
// reads and cancels runs for others, and hands answers to the question it
// asks), and `gaffer serve` offers Pool, which queues runs for its
// workers; the workers execute them with the same Host operations, from a
// journal whose job spec is tagged and versioned (jobspec.go) or, on a
// PostgreSQL store, from the database's run queue that the serves of many
// hosts share (multihost.go: host ids, takeovers; a command with no serve
// on its host opens the store Shared and reaches them through the
// database, with a client Pool; with Config.Remote each host mirrors a
// shared git remote, each run works in its own clone of it, and each
// phase's commit is pushed with compare-and-swap before its checkpoint, so
// that any host may take a run over: remote.go). With
// Config.Notify the host delivers the runs' notices (package notify) while
// it holds the store: after each checkpoint and, at Open, every run's
// pending ones; Close flushes them within a bounded wait.
package host
