package state

import (
	"path"
	"strings"
	"unicode"
)

// ExecDir returns the execution directory of a run, relative to the work
// tree's root and slash separated: "docs/gaffer/<date>-<tracker-id>-<slug>"
// (NewRun derives RunInfo.ExecDir with it). Each part is reduced to letters, digits, dots and dashes; an empty
// tracker id is left out; the slug goes through Slugify. Convert it with
// filepath.FromSlash before using it as a file path.
func ExecDir(date, trackerID, slug string) string {
	var parts []string
	for _, p := range []string{date, trackerID} {
		if p = pathPart(p); p != "" {
			parts = append(parts, p)
		}
	}
	parts = append(parts, Slugify(slug))
	return path.Join("docs", "gaffer", strings.Join(parts, "-"))
}

// pathPart keeps ASCII letters, digits, dots and dashes, turning anything
// else into a dash, and trims dashes and dots from the ends.
func pathPart(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-.")
}

// maxSlug is the longest slug Slugify returns.
const maxSlug = 40

// Slugify turns a goal into a short directory name: lower case ASCII
// letters and digits, words joined by single dashes, accents dropped
// ("Réparer l'API" → "reparer-l-api"), at most 40 characters, cut at a
// word boundary when there is one. It never returns "": a goal with no
// letters or digits becomes "run".
func Slugify(goal string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(goal) {
		r = fold(r)
		if r < unicode.MaxASCII && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxSlug {
		cut := s[:maxSlug+1]
		if i := strings.LastIndexByte(cut, '-'); i >= maxSlug/2 {
			s = s[:i]
		} else {
			s = strings.TrimRight(s[:maxSlug], "-")
		}
	}
	if s == "" {
		return "run"
	}
	return s
}

// fold maps common Latin letters with diacritics to their base letter.
func fold(r rune) rune {
	if r < 0xc0 {
		return r
	}
	i := 0
	for _, f := range foldFrom {
		if f == r {
			return rune(foldTo[i])
		}
		i++
	}
	return r
}

// foldFrom's letters map, one for one, to foldTo's.
const (
	foldFrom = "àáâãäåāăąçćčďèéêëēėęěìíîïīįıñńňòóôõöøōőùúûüūůűųýÿžźżśšşřťţłğ"
	foldTo   = "aaaaaaaaacccdeeeeeeeeiiiiiiinnnoooooooouuuuuuuuyyzzzsssrttlg"
)
