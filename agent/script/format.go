package script

import _ "embed"

// Format is SCRIPT-FORMAT.md, the script file's format, in the binary:
// `gaffer help script-format` prints it where the source tree is not.
//
//go:embed SCRIPT-FORMAT.md
var Format string
