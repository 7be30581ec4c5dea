// Package cli is gaffer's command line, built on urfave/cli/v2: New
// returns the application with its global flags (--repo, --store,
// --profile, --log-level, --log-format, each also read from a GAFFER_*
// environment variable; each is also accepted after a command, where
// withTrailingGlobals gives every command a copy, and globalsOf reads
// them) and its commands. Each command lives in a file of
// its own; the urfave/cli glue reads flags into options and calls the
// run service or a renderer with the writer it is given. Commands return errors and never exit: main hands the error
// to Report, which prints it, and to ExitCode, which maps it to one of the
// documented exit codes (see exitcodes.go); an *ExitError carries an
// explicit code through wrapping.
//
// # The workflow commands
//
// run, approve, reject, resume, status, list, history, diff, logs, fork,
// cancel, delete, prune and demo drive the workflow of package nodes
// through package host, the run service: cli reads flags, calls a
// host.Service, renders what it returns and maps its outcome or refusal
// to an exit code (report, front.go; hostExitCode, exitcodes.go). withService
// (connect.go, socket.Connect) gives a command the process holding the store
// when one answers on its control socket (a socket.Client), and otherwise
// opens the store here (openHost: the repository of --repo, the Badger store of
// --store, default <git dir>/gaffer, outside the work tree, so no reset,
// clean or commit can touch it); the command does not know which it has.
// A command holding the store serves host.Holder on the socket meanwhile,
// serve serves pool.Pool. The Host's Front here is the terminal (front.go)
// and its Setup package profile's (profile.Setup: runs from a host.RunSpec
// the flags fill, runSpec in run.go, and gaffer.yaml's profiles). Output
// goes to the
// IO they are given (NewWithIO); main passes os.Stdin so that, on a
// terminal, run/approve/resume show the whole plan (paged through $PAGER
// or less -FRX when stdout is a terminal, pager.go) and ask approve /
// reject / feedback. Without a terminal a run waiting for approval stops,
// prints the exact `gaffer plan show RUN`, `gaffer approve RUN` and
// `gaffer reject RUN --feedback "…"` commands and exits 4. plan show
// (plan_show.go) prints any run's stored plan.
//
// --repo stands for the top of the work tree it is in (repoTop), so every
// command works from a subdirectory. run checks everything it can before
// it writes anything and lists every problem (profile.Setup.Preflight). A command's
// flags may follow RUN (args.go); unknown ones are a usage error there too.
// completion.go prints the bash, zsh and fish completion scripts and
// answers them through the hidden __complete command.
//
// A run stores how it was started (drivers, script path, plan path,
// auto-approve, pace, limits) in its state, so resume, approve and reject
// need no flags: package profile rebuilds the drivers from that config — the
// one place where a driver kind (script, llm, cli) is made.
//
// # Profiles and real agents
//
// run loads the configuration (profile/config: gaffer.yaml in the repository,
// else the user's) before it opens the store, takes the effective profile
// of --profile (GAFFER_PROFILE; else the file's default) and lays --driver
// and --model over every role (package profile). What the llm
// and cli drivers are built from goes into state.RunConfig: each role's
// driver, model and CLI template name in Agents, and in Drivers the
// provider, base URL, the API key's variable name (never a key), turn and
// token limits, the prices of the models used and the CLI templates used;
// the profile's workflow limits go into Limits. resume and approve rebuild
// the drivers from that alone, so later edits of gaffer.yaml do not change
// a run. run and resume check the key's variable before any work: unset,
// it is exit 8 naming it (and run writes no store); a key the endpoint
// refuses (agent.ErrAuth) stops the run with exit 8 too. A base URL
// carrying a password or key and a template env entry named like a secret
// are refused, since they would be stored. "config show" prints the
// effective profile with secrets masked; a bad file is exit 3 with its
// line.
//
// Before package profile makes any driver of a run, the variables the run's
// profile names as keys leave gaffer's environment (profile.KeyVault, given by
// main as IO.Keys) and every driver's processes start without them; a CLI
// agent gets back those its pass_env lists. hoststore.Open, once it holds the
// store, kills the agents' process groups a killed gaffer left running
// (internal/procgroup, .git/gaffer.groups) before anything else, and makes
// the store 0700 and its files 0600.
// Run ids are "r-YYYYMMDD-xxxxxx", made once at start; the hidden --run-id
// flag fixes one (tests compare two runs' commits, which carry the id).
//
// Without RUN, approve and reject take the newest run waiting for approval,
// resume and cancel the newest unfinished run, status and history the newest run.
// A run whose status is running that no process runs (killed, or stopped
// by an error) is shown as "running (stopped: …)" by status and list, and
// with "stopped": true (and the state's last error) in their JSON: only the
// process that has the store open runs runs, and it knows which (the
// Host's Status says Stopped).
// status, list and history never create a store: in a repository
// without one they say so (exit 8; list exits 0 with no runs).
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
// prints each agent action as it happens. status, that tree and
// status --watch, list, their --json and the inbox share one view model
// (runview.RunOf, whose Tree is a WatchView) and one
// renderer of its phase lines (writePhaseTree, tree.go); each adds only
// its heading and footer.
//
// # Environment variables
//
// Every flag also reads GAFFER_ and its name in upper snake case
// (--allow-dirty: GAFFER_ALLOW_DIRTY, --tracker-id: GAFFER_TRACKER_ID,
// --json: GAFFER_JSON, --from: GAFFER_FROM, --feedback: GAFFER_FEEDBACK);
// the flag wins over the variable. These read none, on purpose:
//
//   - the global flags given after a command, and config show's
//     --profile: the global flags already read GAFFER_REPO, GAFFER_STORE
//     and GAFFER_PROFILE, and a command's copy set from the environment
//     would override a global flag typed on the command line.
//   - run's and submit's --plan and --goal: what to build is one run's; a
//     variable left set would start runs nobody asked for, and make every
//     run given the other one a usage error (both given).
//   - the hidden test flags --run-id and --no-go-test: a run id left in
//     the environment would give every run the same id.
//
// run's --detach and status's --watch and --interval (ops.go) do
// not read one yet.
//
// The kill tests pause gaffer at the moments they SIGKILL it in through
// IO.Hooks (TestHooks): in process they set them, and a gaffer they start
// reads them from the GAFFER_TEST_PAUSE_* variables in its main
// (cmd/gaffer), the one place those are read. What the commands read of
// the environment themselves (TERM, NO_COLOR, GAFFER_REPRODUCIBLE_DATES,
// the configuration's variables) they read through IO.Getenv; a flag's
// variable is read by the flag.
//
// GAFFER_REPRODUCIBLE_DATES=1 dates each commit one second after its
// parent instead of now (nodes.Config.ReproducibleDates), so that the
// same work makes the same commits; tests that compare trees naming
// commit hashes (the kill test) set it.
package cli
