package recovery

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalize checks that Normalize never panics, is idempotent, returns
// valid UTF-8 with no ANSI escape, no upper-case ASCII and no blank line,
// and that Ratio of the result with itself is 1 and stays in [0, 1]
// against the input.
func FuzzNormalize(f *testing.F) {
	for _, p := range errorPairs {
		f.Add(p.a)
	}
	f.Add("\x1b[1;31m/tmp/x/a.go:1:2\x1b[0m 0xdeadBEEF 2026-01-01T00:00:00Z")
	f.Add("\xff\xfe/\\//..")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("invalid UTF-8: %q", n)
		}
		if strings.Contains(n, "\x1b[") || strings.Contains(n, "\n\n") || strings.ContainsAny(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("escape, blank line or upper case left: %q", n)
		}
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent:\n%q\n%q", n, again)
		}
		if r := Ratio(n, n); r != 1 {
			t.Fatalf("Ratio(n, n) = %v", r)
		}
		if len(s) < 300 {
			if r := Ratio(s, n); r < 0 || r > 1 {
				t.Fatalf("Ratio out of range: %v", r)
			}
		}
	})
}

// FuzzParseDoctorAnswer checks that ParseDoctorAnswer never panics, that
// an error always means the zero answer (no advice, never a default
// action), and that an accepted answer is valid and parses the same after
// encoding it again.
func FuzzParseDoctorAnswer(f *testing.F) {
	f.Add(hintAnswer)
	f.Add(`{"action":"replan","confidence":0,"category":"x","rationale":"r"}`)
	f.Add(`{"action":"stop","action":"replan","confidence":0.5,"category":"x","rationale":"r"}`)
	f.Add("```json\n{}\n```")
	f.Add(`{"action":"needs_human","confidence":1e0,"category":"a_1","rationale":"\u00e9","hint":null}`)
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseDoctorAnswer(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedAnswer) || a != (DoctorAnswer{}) {
				t.Fatalf("error %v with answer %+v", err, a)
			}
			return
		}
		if a.Action == ActionNone || a.Action > ActionStop || a.Confidence < 0 || a.Confidence > 1 ||
			a.Rationale == "" || !validName(string(a.Category)) || (a.Action == ActionRetryWithHint && a.Hint == "") {
			t.Fatalf("accepted an invalid answer %+v from %q", a, s)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseDoctorAnswer(string(b))
		if err != nil || back != a {
			t.Fatalf("re-encoded answer %s: %+v, %v", b, back, err)
		}
	})
}
