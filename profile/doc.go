// Package profile turns a request for a run into the run: it implements
// host.Setup for every front end (the command line, serve, the inbox).
// From a host.RunSpec and the repository's configuration (gaffer.yaml,
// package profile/config) it prepares the run once (a Run, host.Prepared):
// the run id minted, the effective profile resolved, everything that can
// be checked before anything is written checked (the spec's shape and
// input files, the script, the profile, the CLI agents' programs, the
// keys, the plan), then the work tree checked once, before the store opens
// (Run.Precheck, which keeps a checkout's lock for the host) or as the
// host begins the run (Run.Begin), which builds its first state. Nothing
// stands between the calls but that value. From a run's stored config it
// makes the agents' drivers (script, llm, cli), with the keys taken out
// of the process's environment (KeyVault) and every session written to a
// redacted transcript. Its refusals are *host.Error codes, never exit
// codes: each front end maps them.
package profile
