package state

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExecDir(t *testing.T) {
	for _, tc := range []struct{ date, id, slug, want string }{
		{"2026-01-02", "42", "fix-login", "docs/gaffer/2026-01-02-42-fix-login"},
		{"2026-01-02", "GAF-7", "Add a cache", "docs/gaffer/2026-01-02-GAF-7-add-a-cache"},
		{"2026-01-02", "", "fix-login", "docs/gaffer/2026-01-02-fix-login"},
		{"2026-01-02", "../../etc", "Fix Login!", "docs/gaffer/2026-01-02-etc-fix-login"},
		{"2026/01/02", "a b", "", "docs/gaffer/2026-01-02-a-b-run"},
	} {
		if got := ExecDir(tc.date, tc.id, tc.slug); got != tc.want {
			t.Errorf("ExecDir(%q, %q, %q) = %q, want %q", tc.date, tc.id, tc.slug, got, tc.want)
		}
	}
}

func TestSlugify(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Add a cache to the API", "add-a-cache-to-the-api"},
		{"  Réparer l'API — vite!  ", "reparer-l-api-vite"},
		{"", "run"},
		{"!!! ???", "run"},
		{"日本語", "run"},
		{"Straße über Ärger", "stra-e-uber-arger"},
		{"Implement the whole authentication flow with refresh tokens", "implement-the-whole-authentication-flow"},
		{strings.Repeat("x", 100), strings.Repeat("x", 40)},
		{"a " + strings.Repeat("y", 60), "a-" + strings.Repeat("y", 38)},
	} {
		if got := Slugify(tc.in); got != tc.want {
			t.Errorf("Slugify(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if utf8.RuneCountInString(foldFrom) != len(foldTo) {
		t.Fatal("fold table is misaligned")
	}
}

var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func FuzzSlugify(f *testing.F) {
	for _, s := range []string{"Add a cache", "", "Réparer", "--a--b--", strings.Repeat("ab ", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, goal string) {
		s := Slugify(goal)
		if len(s) == 0 || len(s) > maxSlug || !slugRE.MatchString(s) {
			t.Fatalf("Slugify(%q) = %q", goal, s)
		}
		if Slugify(s) != s {
			t.Fatalf("Slugify is not idempotent on %q", s)
		}
	})
}
