// Package render holds the small text helpers every front end and the
// host's messages share: a commit's short hash, a count with its noun, a
// bounded list of paths, a string clipped at a rune. It does no I/O.
package render
