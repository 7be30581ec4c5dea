// Package profile turns a request for a run into the run: it implements
// host.Setup for every front end (the command line, serve, the inbox).
// From a host.RunSpec and the repository's configuration (gaffer.yaml,
// package profile/config) it resolves the effective profile, checks
// everything that can be checked before anything is written (the spec's
// shape and input files, the script, the profile, the CLI agents'
// programs, the keys, the plan) and builds the run's first state; from a
// run's stored config it makes the agents' drivers (script, llm, cli),
// with the keys taken out of the process's environment (KeyVault) and
// every session written to a redacted transcript. Its refusals are
// *host.Error codes, never exit codes: each front end maps them.
package profile
