package host

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLastErrorLine: a stopped run keeps its error's first line, trimmed,
// and a long one cut at a rune boundary within maxLastError bytes.
func TestLastErrorLine(t *testing.T) {
	if got := lastErrorLine("  run r-1 stopped: boom \n(fix the cause, then: gaffer resume r-1)\n"); got != "run r-1 stopped: boom" {
		t.Errorf("lastErrorLine = %q", got)
	}
	long := strings.Repeat("é", maxLastError) // 2 bytes each
	got := lastErrorLine(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > maxLastError+len("…") || len(got) < maxLastError-1 {
		t.Errorf("lastErrorLine of %d bytes = %d bytes, valid %v", len(long), len(got), utf8.ValidString(got))
	}
}
