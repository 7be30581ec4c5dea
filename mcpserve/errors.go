package mcpserve

import "errors"

// ErrNoBackend is a Config without a Backend.
var ErrNoBackend = errors.New("mcpserve: no backend")

// errNoRunID is a tool call that names no run.
var errNoRunID = errors.New("run_id is missing: give the id of a run (runs_list lists them)")
