package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExpandContext: the records of the asked phase only, in sequence
// order, under a header carrying the caller's note; a phase without
// records says so; a session without a story and phase 0 are refused; a
// story directory outside the session is refused by the toolbox.
func TestExpandContext(t *testing.T) {
	dir := t.TempDir()
	sd := filepath.Join(dir, "story")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"0002-developer-p1-a1.json": `{"seq":2}`,
		"0001-architect-p1-a1.json": `{"seq":1}`,
		"0003-developer-p2-a1.json": `{"seq":3}`,
		"notes-p1-a1.txt":           "not a record",
	} {
		if err := os.WriteFile(filepath.Join(sd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := NewToolbox(dir, ToolboxOptions{Confine: ConfineOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	got, err := ExpandContext(tb, "story", 1, " (call 1 of 2 for it)")
	if err != nil {
		t.Fatal(err)
	}
	first, second := strings.Index(got, `{"seq":1}`), strings.Index(got, `{"seq":2}`)
	if !strings.HasPrefix(got, "Decision records of phase 1 (call 1 of 2 for it):\n") || first < 0 || first > second ||
		strings.Contains(got, `{"seq":3}`) || strings.Contains(got, "not a record") {
		t.Errorf("phase 1 = %q", got)
	}
	if got, err := ExpandContext(tb, "story", 7, ""); err != nil || !strings.Contains(got, "phase 7 has no decision records") {
		t.Errorf("phase 7 = %q, %v", got, err)
	}
	if _, err := ExpandContext(tb, "", 1, ""); err == nil {
		t.Error("a session without a story expanded")
	}
	if _, err := ExpandContext(tb, "story", 0, ""); err == nil {
		t.Error("phase 0 expanded")
	}
	if _, err := ExpandContext(tb, "../outside", 1, ""); err == nil {
		t.Error("a story directory outside the session was read")
	}
}
