// Package strictyaml checks a parsed YAML node tree against the Go type it
// is to be decoded into, before it is decoded, so that what yaml.v3 would
// silently ignore or coerce is reported with its line: unknown keys, keys
// given twice, values of the wrong kind, keys that are not names, and
// required keys that are missing. An integer field takes only an integer
// in plain decimal digits that fits it (CheckInt): yaml.v3 would cut 1.5
// down to 1 and read 010 as octal. It follows aliases (refusing ones that
// contain themselves, and stopping trees whose aliases expand too far) and,
// when asked, merge keys (<<). A Checker reports Problems, which say what
// is wrong where; the caller words them, so gaffer.yaml and script files
// keep their own messages while sharing one walk.
package strictyaml
