// Package gemini is Google's Gemini CLI's knowledge for the cli driver
// (agent/cliagent): its built-in template ("gemini --output-format
// stream-json"), the parser of its JSON lines, its outage classification
// (the API error code in its result), the state it writes
// ($GEMINI_CLI_HOME/.gemini or $HOME/.gemini) for confinement, the flags
// that make it act without asking, and its pinned npm install. It is the
// third vendor, added as one package and one line of the driver's vendor
// table.
package gemini
