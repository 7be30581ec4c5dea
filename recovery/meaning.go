package recovery

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
)

// Required is one thing the goal anchor names that a revision must still
// require: a function or type, a file, a command, or an acceptance
// criterion (a quoted test input).
type Required struct {
	Kind string // "name", "file", "command" or "criterion"
	Text string
	Task string // the id of the anchored task that names it
}

// Known file extensions: a dotted token ending in one is a file.
var fileExt = lazyRegexp(`\.(?:go|py|js|jsx|ts|tsx|mjs|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|scala|md|txt|yaml|yml|json|toml|ini|cfg|sh|sql|html|css|proto|mod|sum|lock|xml|csv)$`)

var (
	backticked = lazyRegexp("`([^`\n]{1,120})`")
	quoted     = lazyRegexp(`"([^"\n]{1,40})"`)
	goalToken  = lazyRegexp(`[A-Za-z_./][A-Za-z0-9_./-]*(?:\(\))?`)
	commandRe  = lazyRegexp(`(?m)^\s*\$ (.+)$`)
)

// commonCapitalized are capitalised words that are English or acronyms, not
// names, wherever they stand.
var commonCapitalized = map[string]bool{"I": true, "The": true, "A": true, "An": true, "And": true, "Or": true, "Go": true, "Python": true, "Rust": true,
	"JavaScript": true, "TypeScript": true, "Java": true, "Markdown": true, "README": true, "TDD": true, "GitHub": true, "Unicode": true,
	"UTF-8": true, "Linux": true, "macOS": true, "Windows": true, "PostgreSQL": true, "SQLite": true, "OK": true}

// RequiredOf extracts what anchor a names: in each task's title and body,
// names (CamelCase, snake_case, dotted pkg.Func, a call foo(), a
// capitalised word inside a sentence such as Add in "implement Add and
// Sub"), files (a path with a slash or a known extension), commands (in
// backticks with a space, or a "$ " line) and acceptance criteria (short
// quoted literals such as "1h30m"). Each item appears once, with the first
// task that names it.
func RequiredOf(a Anchor) []Required { return required(a, false) }

// required is RequiredOf; with perTask, an item appears once per task
// that names it.
func required(a Anchor, perTask bool) []Required {
	var out []Required
	seen := map[string]bool{}
	add := func(kind, text, task string) {
		text = strings.TrimSpace(text)
		key := kind + "\x00" + text
		if perTask {
			key += "\x00" + task
		}
		if text == "" || seen[key] {
			return
		}
		seen[key] = true
		out = append(out, Required{Kind: kind, Text: text, Task: task})
	}
	for _, t := range a.Tasks {
		text := t.Title + ".\n" + t.Body
		for _, m := range commandRe().FindAllStringSubmatch(text, -1) {
			add("command", m[1], t.ID)
		}
		for _, m := range backticked().FindAllStringSubmatch(text, -1) {
			switch inner := strings.TrimSpace(m[1]); {
			case strings.ContainsRune(inner, ' '):
				add("command", inner, t.ID)
			default:
				addToken(add, inner, t.ID, false)
			}
		}
		for _, m := range quoted().FindAllStringSubmatch(text, -1) {
			if strings.Count(m[1], " ") <= 3 {
				add("criterion", m[1], t.ID)
			}
		}
		plain := backticked().ReplaceAllString(quoted().ReplaceAllString(text, " "), " ")
		for _, loc := range goalToken().FindAllStringIndex(plain, -1) {
			addToken(add, plain[loc[0]:loc[1]], t.ID, sentenceStart(plain, loc[0]))
		}
	}
	return out
}

// addToken adds tok when it is a name or a file.
func addToken(add func(kind, text, task string), tok, task string, atStart bool) {
	tok = strings.TrimRight(tok, ".-/")
	call := strings.HasSuffix(tok, "()")
	tok = strings.TrimSuffix(tok, "()")
	switch {
	case len(tok) < 2:
	case fileExt().MatchString(tok) || (strings.Contains(tok, "/") && !strings.HasPrefix(tok, "/") && hasLetter(tok)):
		add("file", cleanFile(tok), task)
	case strings.ContainsAny(tok, "/-"):
	case call, strings.Contains(tok, "_") && hasLetter(tok), camel(tok), dotted(tok):
		add("name", tok, task)
	case !atStart && unicode.IsUpper(rune(tok[0])) && !commonCapitalized[tok] && !acronym(tok):
		add("name", tok, task)
	}
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// camel: a lower-case letter followed by an upper-case one (parseDuration,
// ParseDuration, HTTPServer is not, UserID is).
func camel(s string) bool {
	for i := 1; i < len(s); i++ {
		if unicode.IsLower(rune(s[i-1])) && unicode.IsUpper(rune(s[i])) {
			return true
		}
	}
	return false
}

// dotted: pkg.Func, two identifier parts of two letters or more.
func dotted(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(p) < 2 || !hasLetter(p) {
			return false
		}
	}
	return true
}

func acronym(s string) bool { return len(s) <= 5 && strings.ToUpper(s) == s }

// sentenceStart reports whether the token at i begins a sentence (or the
// text): only spaces, and before them a sentence end or a list marker.
func sentenceStart(text string, i int) bool {
	j := i - 1
	for j >= 0 && (text[j] == ' ' || text[j] == '\t') {
		j--
	}
	if j < 0 {
		return true
	}
	return strings.ContainsRune(".!?:;\n-*#>", rune(text[j])) || text[j] >= '0' && text[j] <= '9'
}

// mentions reports whether text requires r: a name or criterion as a
// whole word ("1h" is not in "1h30m"), a file or command as text.
func mentions(text string, r Required) bool {
	if r.Kind != "name" && r.Kind != "criterion" {
		return strings.Contains(text, r.Text)
	}
	for i := 0; ; {
		j := strings.Index(text[i:], r.Text)
		if j < 0 {
			return false
		}
		s, e := i+j, i+j+len(r.Text)
		if (s == 0 || !identRune(text[s-1])) && (e == len(text) || !identRune(text[e])) {
			return true
		}
		i = s + 1
	}
}

func identRune(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// testWord marks a sentence about tests.
var testWord = lazyRegexp(`(?i)\b(?:tests?|test cases?|cases?|assert\w*|assertions?|checks?|specs?|coverage|expectations?)\b`)

var sentenceEnd = lazyRegexp(`[.;!?]\s+|\n+`)

// sentences splits text at sentence ends, semicolons and lines.
func sentences(text string) []string { return sentenceEnd().Split(text, -1) }

// narrowedBy returns the anchored items and tests a sentence of the
// revision puts off or weakens ("subtraction is deferred", "Sub lands in
// the next milestone", "skip the bad-input cases"): a sentence that
// Defers, together with a required name (or a word that begins with it,
// as "subtraction" with Sub), file, command, criterion, or a word about
// tests. A sentence the anchor itself has is not the revision's.
func narrowedBy(revision, anchorText string, req []Required) []string {
	var out []string
	anchorNorm := normSpace(anchorText)
	for _, s := range sentences(revision) {
		s = strings.TrimSpace(s)
		how := Defers(s)
		if s == "" || how == "" || strings.Contains(anchorNorm, normSpace(s)) {
			continue
		}
		var hits []string
		for _, r := range req {
			if mentions(s, r) || r.Kind == "name" && stemIn(s, r.Text) {
				hits = append(hits, r.Text)
			}
		}
		if testWord().MatchString(s) {
			hits = append(hits, "tests")
		}
		if len(hits) > 0 {
			out = append(out, fmt.Sprintf("%q puts off or weakens %s (%s)", s, strings.Join(hits, ", "), how))
		}
	}
	return out
}

// stemIn reports whether a word of s begins with name (3 letters or
// more), case-insensitively: "subtraction" for Sub.
func stemIn(s, name string) bool {
	if len(name) < 3 {
		return false
	}
	n := strings.ToLower(name)
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if strings.HasPrefix(strings.ToLower(w), n) {
			return true
		}
	}
	return false
}

func normSpace(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// FileChange is one file a phase changed: its content before the phase
// (at the pre-phase commit) and after; "" for a file that did not exist
// or was deleted.
type FileChange struct {
	Path, Before, After string
}

// IsTestFile reports whether p is a test file by the usual conventions:
// Go's _test.go, Python's test_*.py and *_test.py, JavaScript's and
// TypeScript's .test. and .spec., Ruby's _spec.rb, Java's *Test.java,
// and anything under a tests, test, spec or __tests__ directory.
func IsTestFile(p string) bool {
	p = cleanFile(p)
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"), strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(base, "_test.py"), strings.Contains(base, ".test."), strings.Contains(base, ".spec."),
		strings.HasSuffix(base, "_spec.rb"), strings.HasSuffix(base, "Test.java"), strings.HasSuffix(base, "Tests.cs"):
		return true
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		if d == "tests" || d == "test" || d == "spec" || d == "__tests__" {
			return true
		}
	}
	return false
}

var (
	testFuncRe = lazyRegexp(`(?m)^func Test\w*\(|^\s*def test\w*\(|^\s*(?:it|test)\s*\(\s*['"\x60]|^\s*it\s+['"]|@Test\b|#\[test\]`)
	assertRe   = lazyRegexp(`\b(?:assert\w*|expect\s*\(|t\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|require\.\w+\(|self\.assert\w+|should\.\w+|\.to(?:Be|Equal|Throw)\w*\()`)
	tableRowRe = lazyRegexp(`(?m)^\s*\{\s*"[^"\n]*"\s*,`)
	skipRe     = lazyRegexp(`\bt\.Skip(?:f|Now)?\(|\bx(?:it|describe|test)\s*\(|\b(?:it|describe|test)\.skip\s*\(|@pytest\.mark\.(?:skip|xfail)|@unittest\.skip|\bpytest\.skip\(|#\[ignore\]|@Disabled\b|@Ignore\b|\bskip\s*\(\s*['"]`)
	commentRe  = lazyRegexp(`^\s*(?://|#|/\*|\*)\s?(.*)$`)
)

// commentedAssertRe marks a commented-out assertion whatever its
// receiver: "// tb.Fatalf(…)".
var commentedAssertRe = lazyRegexp(`\b\w+\.(?:Errorf?|Fatalf?|Fail(?:Now)?)\(`)

// testCounts counts a test file's test functions, assertions, table
// rows, skips and commented-out test lines.
type testCounts struct{ funcs, asserts, rows, skips, commented int }

// countTests counts the test file p whose text is text. A Go file is
// counted by what its calls call (testcount.go: any testing receiver,
// require and assert, and the helpers hs holds), other files
// by the usual patterns.
func countTests(p, text string, hs helperSet) testCounts {
	var c testCounts
	var live strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if m := commentRe().FindStringSubmatch(line); m != nil {
			if testFuncRe().MatchString(m[1]) || assertRe().MatchString(m[1]) || commentedAssertRe().MatchString(m[1]) || tableRowRe().MatchString(m[1]) {
				c.commented++
			}
			continue
		}
		live.WriteString(line + "\n")
	}
	l := live.String()
	c.rows = len(tableRowRe().FindAllStringIndex(l, -1))
	if strings.HasSuffix(p, ".go") {
		if g, ok := parseGo(text); ok {
			c.funcs, c.asserts, c.skips = g.count(hs)
			return c
		}
		// Text that does not parse: the patterns, with the names it
		// gives testing values.
		names := map[string]bool{}
		for _, m := range goTestValues().FindAllStringSubmatch(l, -1) {
			names[m[1]] = true
		}
		c.funcs = len(testFuncRe().FindAllStringIndex(l, -1))
		c.asserts = len(goAssertRe(names).FindAllStringIndex(l, -1))
		c.skips = len(skipRe().FindAllStringIndex(l, -1))
		return c
	}
	c.funcs = len(testFuncRe().FindAllStringIndex(l, -1))
	c.asserts = len(assertRe().FindAllStringIndex(l, -1))
	c.skips = len(skipRe().FindAllStringIndex(l, -1))
	return c
}

// CheckTestChanges returns the ways a phase's changes weaken its tests,
// judged from the test files' content before and after: fewer test
// functions, fewer assertions, fewer table cases, a skip added (t.Skip,
// xit, xdescribe, it.skip, @pytest.mark.skip, …), test lines commented
// out, a test file deleted. None for changes that keep or add tests. Go
// assertions are counted by what they call, whatever the test value is
// named, a helper's call counting as its assertion (testcount.go), so
// moving assertions into a helper is no narrowing.
func CheckTestChanges(changes []FileChange) []string {
	var out []string
	sorted := slices.Clone(changes)
	slices.SortFunc(sorted, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	// The helpers of every Go file changed, before and after: a helper
	// moved to another file of the change still counts where it is called.
	var gos []goFile
	for _, ch := range sorted {
		if strings.HasSuffix(ch.Path, ".go") {
			for _, text := range []string{ch.Before, ch.After} {
				if g, ok := parseGo(text); ok {
					gos = append(gos, g)
				}
			}
		}
	}
	hs := goHelpers(gos)
	for _, ch := range sorted {
		if !IsTestFile(ch.Path) || ch.Before == ch.After {
			continue
		}
		b, a := countTests(ch.Path, ch.Before, hs), countTests(ch.Path, ch.After, hs)
		p := cleanFile(ch.Path)
		if ch.After == "" && b.funcs+b.asserts > 0 {
			out = append(out, fmt.Sprintf("%s: the test file is deleted (%d test functions, %d assertions)", p, b.funcs, b.asserts))
			continue
		}
		for _, d := range []struct {
			what          string
			before, after int
		}{{"test functions", b.funcs, a.funcs}, {"assertions", b.asserts, a.asserts}, {"table cases", b.rows, a.rows}} {
			if d.after < d.before {
				out = append(out, fmt.Sprintf("%s: %s go from %d to %d", p, d.what, d.before, d.after))
			}
		}
		if a.skips > b.skips {
			out = append(out, fmt.Sprintf("%s: %d test skip(s) added", p, a.skips-b.skips))
		}
		if a.commented > b.commented {
			out = append(out, fmt.Sprintf("%s: %d test line(s) commented out", p, a.commented-b.commented))
		}
	}
	return out
}
