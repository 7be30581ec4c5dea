package workspace

import (
	"os/exec"
	"strings"
	"testing"
)

var trailerCases = []struct {
	name string
	msg  string
	want []Trailer
}{
	{"subject only", "Key: value\n", nil},
	{"simple", "subject\n\nGaffer-Run: r1\nGaffer-Phase: 2\n", []Trailer{{"Gaffer-Run", "r1"}, {"Gaffer-Phase", "2"}}},
	{"body then block", "subject\n\nbody line\nmore body\n\nA: 1\nB-c: two words\n", []Trailer{{"A", "1"}, {"B-c", "two words"}}},
	{"last paragraph is prose", "subject\n\nA: 1\n\nJust prose.\n", nil},
	{"mixed without generated", "subject\n\nA: 1\nnot a trailer\n", nil},
	{"mixed with signed-off-by", "subject\n\nA: 1\nSigned-off-by: X <x@y>\nnot a trailer\n", []Trailer{{"A", "1"}, {"Signed-off-by", "X <x@y>"}}},
	{"continuation", "subject\n\nA: first\n  second\nB: 2\n", []Trailer{{"A", "first second"}, {"B", "2"}}},
	{"space before colon", "subject\n\nKey : v\n", []Trailer{{"Key", "v"}}},
	{"crlf and trailing blanks", "subject\r\n\r\nA: 1\r\n\r\n\r\n", []Trailer{{"A", "1"}}},
	{"a url reads as a trailer, as git reads it", "subject\n\nhttp://example.com\n", []Trailer{{"http", "//example.com"}}},
}

func TestParseTrailers(t *testing.T) {
	for _, tc := range trailerCases {
		got := ParseTrailers(tc.msg)
		if len(got) != len(tc.want) {
			t.Errorf("%s: ParseTrailers = %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: ParseTrailers = %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestParseTrailersAgreesWithGit checks every case against
// `git interpret-trailers --parse`.
func TestParseTrailersAgreesWithGit(t *testing.T) {
	hermetic(t)
	for _, tc := range trailerCases {
		cmd := exec.Command("git", "interpret-trailers", "--parse", "--no-divider")
		cmd.Stdin = strings.NewReader(tc.msg)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git interpret-trailers: %v", err)
		}
		gitSays := sortedLines(string(out))
		var ours []string
		for _, tr := range ParseTrailers(tc.msg) {
			ours = append(ours, tr.String())
		}
		ours = sortedLines(strings.Join(ours, "\n"))
		if tc.name == "mixed with signed-off-by" {
			continue // git also prints the non-trailer line of a mixed block
		}
		if !equalStrings(ours, gitSays) {
			t.Errorf("%s: ours %q, git %q", tc.name, ours, gitSays)
		}
	}
}

func TestFormatMessage(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		tr   []Trailer
		want string
	}{
		{"subject", nil, "subject\n"},
		{"\n\nsubject  \n\n\n\nbody\t\n\n", nil, "subject\n\nbody\n"},
		{"subject", []Trailer{{"A", " 1 "}}, "subject\n\nA: 1\n"},
		{"subject\n\nbody", []Trailer{{"A", "1"}, {"B", ""}}, "subject\n\nbody\n\nA: 1\nB:\n"},
		{"subject\n\nX: y", []Trailer{{"A", "1"}}, "subject\n\nX: y\nA: 1\n"},
	} {
		got, err := FormatMessage(tc.msg, tc.tr)
		if err != nil || got != tc.want {
			t.Errorf("FormatMessage(%q, %v) = %q, %v; want %q", tc.msg, tc.tr, got, err, tc.want)
		}
	}
}

func TestTrailerValue(t *testing.T) {
	ts := []Trailer{{"Gaffer-Run", "a"}, {"gaffer-run", "b"}, {"Other", "c"}}
	if v, ok := TrailerValue(ts, "GAFFER-RUN"); !ok || v != "b" {
		t.Fatalf("TrailerValue = %q, %v", v, ok)
	}
	if _, ok := TrailerValue(ts, "Missing"); ok {
		t.Fatal("found a missing trailer")
	}
}

// FuzzTrailersRoundTrip: whatever the message, the trailers Commit appends
// are the last trailers ParseTrailers reads back.
func FuzzTrailersRoundTrip(f *testing.F) {
	for _, tc := range trailerCases {
		f.Add(tc.msg, "Gaffer-Run", "r-1")
	}
	f.Add("s\n\n(cherry picked from commit abc)\nx\ny\nz\nw", "K", "v")
	f.Fuzz(func(t *testing.T, msg, key, value string) {
		tr := []Trailer{{key, value}, {"Gaffer-Attempt", "1"}}
		out, err := FormatMessage(msg, tr)
		if err != nil {
			return
		}
		got := ParseTrailers(out)
		if len(got) < 2 {
			t.Fatalf("FormatMessage(%q) = %q parses to %v", msg, out, got)
		}
		last := got[len(got)-2:]
		if last[0] != (Trailer{key, strings.TrimSpace(value)}) || last[1] != tr[1] {
			t.Fatalf("FormatMessage(%q) = %q parses to %v", msg, out, got)
		}
		if again, _ := FormatMessage(out, nil); again != out {
			t.Fatalf("FormatMessage is not stable: %q then %q", out, again)
		}
	})
}
