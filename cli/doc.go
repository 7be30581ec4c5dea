// Package cli is gaffer's command line, built on urfave/cli/v2: New
// returns the application with its global flags (--repo, --store,
// --profile, --log-level, --log-format, each also read from a GAFFER_*
// environment variable) and its commands. Each command lives in a file of
// its own as an options struct with a Run(ctx, w) method that writes to
// the io.Writer it is given; the urfave/cli glue only reads flags into
// that struct. Commands return errors and never exit: main hands the error
// to Report, which prints it, and to ExitCode, which maps it to one of the
// documented exit codes (see exitcodes.go); an *ExitError carries an
// explicit code through wrapping.
//
// # The workflow commands
//
// run, approve, reject, resume, status, list, history, fork, cancel and
// demo drive the workflow of package nodes. Each lives in its own file and
// works on an env (open.go): the repository of --repo, the Badger store of
// --store (default <git dir>/gaffer, outside the work tree, so no reset,
// clean or commit can touch it) and the compiled graph. Output goes to the
// IO they are given (NewWithIO); main passes os.Stdin so that, on a
// terminal, run/approve/resume show the plan and ask approve / reject /
// feedback. Without a terminal a run waiting for approval stops, prints the
// exact `gaffer approve RUN` and `gaffer reject RUN --feedback "…"`
// commands and exits 4.
//
// A run stores how it was started (drivers, script path, plan path,
// auto-approve, pace, limits) in its state, so resume, approve and reject
// need no flags: driverFactory rebuilds the drivers from that config — the
// one place where a driver kind (script now; llm and cli later) is made.
// Run ids are "r-YYYYMMDD-xxxxxx", made once at start; the hidden --run-id
// flag fixes one (tests compare two runs' commits, which carry the id).
//
// Without RUN, approve and reject take the newest run waiting for approval,
// resume and cancel the newest unfinished run, status the newest run.
// Flags may follow RUN (`gaffer reject RUN --feedback "…"`), as the
// commands gaffer prints do, and --repo and --store may also follow the
// command (`gaffer resume --repo DIR`).
//
// The outcome of run, approve, reject, resume and demo is the exit code:
// 0 completed, 4 waiting for approval, 5 halted, failed or cancelled, 6
// rejected, 7 the store or the run is held by another process (the line
// names its pid and host), 8 a precondition (dirty tree, no commit, no
// such run). A run stopped by an error of its own (a driver that cannot
// start) exits 5 with the cause and the `gaffer resume` command; one
// stopped by a signal exits 1 and resumes the same way.
//
// Progress comes from the runner's events: plain lines (node started,
// review verdicts, phase outcomes, status changes) when stdout is not a
// terminal, and the phase tree (✓ done, ● running, ○ pending, ✗ failed,
// with attempts, review iterations and commits) drawn whenever a phase
// starts, is retried or the run ends on a terminal. The script driver
// prints each agent action as it happens.
//
// GAFFER_TEST_PAUSE_AFTER_COMMIT (a duration) makes every commit announce
// itself on stdout and pause before its checkpoint: the kill test uses it
// to SIGKILL a run between a commit and its checkpoint.
package cli
