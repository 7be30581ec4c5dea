// Package serve is the worker pool behind `gaffer serve`: a long-running
// process that owns the store, takes runs from `gaffer submit`, executes
// them on a bounded number of workers and survives its own crashes.
//
// # Jobs and workers
//
// A Job names a run and what to do with it: start it (with an opaque spec
// the submitter sent), resume it, or answer its pending interrupt (a human's
// approval). An Executor does the work; it returns OutcomeParked when the
// run stopped to wait for a human, which frees the worker: a parked run holds
// no worker until Answer queues its answer.
//
// # Keys
//
// Each Job carries a Key naming what its run works on; gaffer uses the
// absolute, symlink-resolved root of the run's repository, since the runs
// of one repository share its work tree. The pool never executes two jobs
// with the same Key at once: a worker takes the first queued job whose key
// no executing job holds, so the jobs of one key execute one at a time in
// queue order, while a job waiting for its key does not hold up the jobs
// of other keys behind it. A parked run holds neither a worker nor its key;
// its answer is queued and waits for the key like any job. The key "" is
// held by nothing. Config.KeyOf gives the key of a job submitted without
// one (Answer's) and of a job read from a journal written before keys.
//
// # The journal
//
// The pool writes its queue and the jobs its workers are executing to a
// journal file beside the store (crash-safely: temp file, fsync, rename) on
// every change, keys included. New reads it back: jobs that were executing when the last
// process died are queued first, marked Recovered, then the jobs that were
// waiting. An Executor resumes a recovered job from its run's latest
// checkpoint (a start whose run exists becomes a resume; an answer already
// consumed becomes a plain resume).
//
// # Queues
//
// Queue is what the front of serve works through: LocalQueue, with the journal
// below, is the embedded default for one process; package serve/pgqueue
// keeps the queue in PostgreSQL for the serves of many hosts sharing a
// database store, which claim jobs with SKIP LOCKED under leases and take
// over a dead host's runs.
//
// # Draining
//
// Drain stops taking work and lets each executing run reach its next
// checkpoint: Observe, subscribed to the runner's events, cancels a run's
// context (cause ErrDrained) when a checkpoint of it is saved while
// draining. After the timeout every run still executing is cancelled. The
// runtime releases a run's lease when its context ends, and the journal
// keeps the cut-off jobs, so the next process resumes them.
package serve
