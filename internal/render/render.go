package render

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Short is a commit's short hash: its first seven digits.
func Short(sha string) string { return sha[:min(7, len(sha))] }

// ListPaths joins up to max paths with ", ", and says how many more there are.
func ListPaths(paths []string, max int) string {
	if len(paths) <= max {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:max], ", "), len(paths)-max)
}

// Plural is "1 path", "2 paths".
func Plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Clip returns s cut to at most max bytes at a rune boundary, and whether
// it was cut.
func Clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
