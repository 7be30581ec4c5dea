package short

import "strings"

// Width is how many bytes of a value an error message quotes.
const Width = 60

// Clip shortens s for an error message.
func Clip(s string) string {
	if len(s) <= Width {
		return s
	}
	return s[:Width] + "…"
}

// FirstLine returns the first non-blank line of s, without heading marks,
// clipped.
func FirstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); line != "" {
			return Clip(line)
		}
	}
	return ""
}
