// Package claude is Claude Code's knowledge for the cli driver
// (agent/cliagent): its built-in template, the parser of its stream-json
// output, its outage classification (api_error_status), the state it
// writes ($HOME/.claude) for confinement, the tools it can be denied, the
// flag that skips its permission prompts, and its pinned npm install. The
// driver lists it in its vendor table.
package claude
