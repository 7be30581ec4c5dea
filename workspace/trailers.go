package workspace

import (
	"context"
	"fmt"
	"strings"
)

// Trailer is one "Key: Value" line of a commit message's trailer block,
// such as "Gaffer-Run: r-1" or "Signed-off-by: A <a@b>".
type Trailer struct {
	Key   string
	Value string
}

// String returns "Key: Value".
func (t Trailer) String() string { return t.Key + ": " + t.Value }

// Validate checks that the key is a token of ASCII letters, digits and
// dashes not starting with a dash, and that the value is one line.
func (t Trailer) Validate() error {
	if !isTrailerKey(t.Key) {
		return fmt.Errorf("%w: key %q must be letters, digits and dashes", ErrInvalidTrailer, t.Key)
	}
	if strings.ContainsAny(t.Value, "\r\n") {
		return fmt.Errorf("%w: value of %s spans lines", ErrInvalidTrailer, t.Key)
	}
	return nil
}

func isTrailerKey(k string) bool {
	if k == "" || k[0] == '-' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// FormatMessage cleans a commit message the way `git commit` does (no
// trailing spaces, no leading or repeated blank lines, one final newline)
// and appends the trailers as a git trailer block: after a blank line, or
// added to the message's own trailer block when it ends with one.
func FormatMessage(msg string, trailers []Trailer) (string, error) {
	for _, t := range trailers {
		if err := t.Validate(); err != nil {
			return "", err
		}
	}
	lines := cleanLines(msg)
	if len(lines) == 0 {
		return "", ErrEmptyMessage
	}
	if len(trailers) > 0 {
		if _, ok := trailerBlock(lines); !ok {
			lines = append(lines, "")
		}
		for _, t := range trailers {
			lines = append(lines, strings.TrimRight(t.Key+": "+strings.TrimSpace(t.Value), " "))
		}
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// cleanLines splits a message into lines without trailing whitespace,
// dropping leading and trailing blank lines and collapsing runs of them.
func cleanLines(msg string) []string {
	var out []string
	blank := false
	for _, l := range strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return out
}

// ParseTrailers returns the trailers of a commit message, following git's
// rules: the trailer block is the last paragraph, never the subject's; it
// qualifies when every line is a trailer (continuation lines, indented,
// extend the previous value), or when at least a quarter are and one of
// them is git-generated (Signed-off-by, "(cherry picked from commit").
func ParseTrailers(msg string) []Trailer {
	ts, _ := trailerBlock(cleanLines(msg))
	return ts
}

func trailerBlock(lines []string) ([]Trailer, bool) {
	start := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == "" {
			start = i + 1
			break
		}
	}
	if start < 0 || start >= len(lines) {
		return nil, false // one paragraph: the subject
	}
	var out []Trailer
	trailers, others, generated := 0, 0, false
	lastWasTrailer := false
	for _, l := range lines[start:] {
		if (l[0] == ' ' || l[0] == '\t') && lastWasTrailer {
			out[len(out)-1].Value = strings.TrimSpace(out[len(out)-1].Value + " " + strings.TrimSpace(l))
			continue
		}
		if strings.HasPrefix(l, "(cherry picked from commit ") {
			generated = true
			trailers++
			lastWasTrailer = false
			continue
		}
		k, v, ok := splitTrailer(l)
		if !ok {
			others++
			lastWasTrailer = false
			continue
		}
		if strings.EqualFold(k, "Signed-off-by") {
			generated = true
		}
		trailers++
		out = append(out, Trailer{Key: k, Value: v})
		lastWasTrailer = true
	}
	if trailers == 0 || (others > 0 && !(generated && trailers*3 >= others)) {
		return nil, false
	}
	return out, true
}

// splitTrailer splits "Key: value" (spaces allowed before the colon).
func splitTrailer(l string) (key, value string, ok bool) {
	i := strings.IndexByte(l, ':')
	if i <= 0 {
		return "", "", false
	}
	key = strings.TrimRight(l[:i], " \t")
	if !isTrailerKey(key) {
		return "", "", false
	}
	return key, strings.TrimSpace(l[i+1:]), true
}

// Trailers returns the trailers of a commit's message. commit is any
// revision: a hash, HEAD, a branch.
func (r *Repo) Trailers(ctx context.Context, commit string) ([]Trailer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() ([]Trailer, error) {
		c, err := r.resolve(commit)
		if err != nil {
			return nil, err
		}
		return ParseTrailers(c.Message), nil
	})
}

// TrailerValue returns the value of the last trailer with key (compared
// without regard to case), and whether there is one.
func TrailerValue(trailers []Trailer, key string) (string, bool) {
	for i := len(trailers) - 1; i >= 0; i-- {
		if strings.EqualFold(trailers[i].Key, key) {
			return trailers[i].Value, true
		}
	}
	return "", false
}
