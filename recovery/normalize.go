package recovery

import (
	"regexp"
	"strings"
	"sync"
)

// The placeholders Normalize puts in place of the volatile parts of an
// error text.
const (
	phN    = "<n>"    // a line or column number, a goroutine id
	phTmp  = "<tmp>"  // a temporary directory
	phAddr = "<addr>" // a hex address or offset
	phSHA  = "<sha>"  // a commit or object hash
	phUUID = "<uuid>" // a UUID
	phTime = "<time>" // a date, a time of day or both
	phDur  = "<dur>"  // a duration such as 0.01s or 1m30s
)

// normalizer holds the compiled patterns of Normalize. Normalize uses one
// built once for the package: the patterns are constants, so the value is
// read-only and safe for concurrent use.
type normalizer struct {
	ansi, uuid, stamp, clock, tempPath, path, tsPos, pyLine, pos,
	goroutine, addr, sha, dur, space *regexp.Regexp
}

func newNormalizer() *normalizer {
	return &normalizer{
		// CSI and OSC escape sequences.
		ansi: regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`),
		uuid: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		// 2024-01-02T15:04:05.123Z, 2024/01/02 15:04:05, 2024-01-02.
		stamp: regexp.MustCompile(`(?i)\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\s?UTC)?)?\b`),
		clock: regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b`),
		// A path under a temporary directory (matched against a whole path).
		tempPath: regexp.MustCompile(`(?i)^(?:/tmp|/var/folders|/private/var/folders|/var/tmp|[a-z]:\\users\\[^\\]+\\appdata\\local\\temp|[a-z]:\\windows\\temp)(?:[/\\]|$)`),
		// A path with at least one separator.
		path: regexp.MustCompile(`(?:[a-zA-Z]:)?(?:[\w.\-@+~]*[/\\])+[\w.\-@+]*`),
		// TypeScript positions: a.ts(12,5).
		tsPos: regexp.MustCompile(`\((\d+),(\d+)\)`),
		// Python tracebacks: line 42.
		pyLine: regexp.MustCompile(`(?i)\bline (\d+)\b`),
		// file.go:12:3, file.py:42: a position after a file name.
		pos:       regexp.MustCompile(`([\w.\-]+\.\w+):(\d+)(?::(\d+))?`),
		goroutine: regexp.MustCompile(`(?i)goroutine (\d+)\b`),
		addr:      regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`),
		// 7 to 64 hex digits with at least one digit and one letter.
		sha: regexp.MustCompile(`(?i)\b[0-9a-f]{7,64}\b`),
		// 0.01s, 12ms, 1m30s, 1.5µs, 3h2m1s.
		// 0.01s, 12ms, 1m30s, 1.5µs, 3h2m1s; Jest's "5.123 s".
		dur:   regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+\b|\b\d+\.\d+ s\b`),
		space: regexp.MustCompile(`[ \t]+`),
	}
}

// defaultNormalizer is made on first use: compiling its patterns at the
// process's start cost every command, a listing too.
var defaultNormalizer = sync.OnceValue(newNormalizer)

// Normalize returns err with what changes between two runs of the same
// failing code replaced by placeholders, lower-cased, with runs of blanks
// folded and blank lines dropped: ANSI escape codes are removed; UUIDs,
// timestamps and times of day, hex addresses (0xc000123abc, +0x1d),
// commit hashes, durations (0.01s, 1m30s) and goroutine ids become
// <uuid>, <time>, <addr>, <sha>, <dur> and "goroutine <n>"; a path keeps
// only its base name when that looks like a file name (has an extension),
// and a path under a temporary directory (/tmp, /var/folders, %TEMP%)
// otherwise becomes <tmp>, so the same file in two temp dirs is one text; positions after a file name (file.go:12:3,
// a.ts(12,5), Python's "line 42") become <n>.
//
// Normalize is deterministic and never fails; the same bug on another
// line, in another temp dir, at another time normalizes to the same text.
//
// One pass of the rules can leave text that a second pass would still
// change (a placeholder can end next to a number), so Normalize repeats
// them until the text stops changing, at most maxPasses times; the result
// is, in practice, a fixed point: Normalize(Normalize(x)) == Normalize(x),
// which FuzzNormalize checks.
func Normalize(err string) string {
	s := defaultNormalizer().normalize(err)
	for range maxPasses - 1 {
		next := defaultNormalizer().normalize(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// maxPasses bounds the passes of Normalize.
const maxPasses = 4

func (n *normalizer) normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = n.ansi.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\x1b", "") // a stray or cut-off escape
	// Lower-case and fold blanks first, so that no later pattern can match
	// only on a second pass: Normalize(Normalize(x)) == Normalize(x).
	s = strings.ToLower(s)
	s = n.space.ReplaceAllString(s, " ")
	s = n.uuid.ReplaceAllString(s, phUUID)
	s = n.stamp.ReplaceAllString(s, phTime)
	s = n.clock.ReplaceAllString(s, phTime)
	s = n.path.ReplaceAllStringFunc(s, n.replacePath)
	s = n.tsPos.ReplaceAllString(s, "("+phN+","+phN+")")
	s = n.pyLine.ReplaceAllString(s, "line "+phN)
	s = n.goroutine.ReplaceAllString(s, "goroutine "+phN)
	s = n.pos.ReplaceAllStringFunc(s, func(m string) string {
		sub := n.pos.FindStringSubmatch(m)
		out := sub[1] + ":" + phN
		if sub[3] != "" {
			out += ":" + phN
		}
		return out
	})
	s = n.addr.ReplaceAllString(s, phAddr)
	s = n.sha.ReplaceAllStringFunc(s, func(m string) string {
		if strings.ContainsAny(m, "0123456789") && strings.ContainsAny(m, "abcdefABCDEF") {
			return phSHA
		}
		return m
	})
	s = n.dur.ReplaceAllString(s, phDur)
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(n.space.ReplaceAllString(line, " "))
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}

// replacePath turns a path into its base name, except that a path under a
// temporary directory whose last element is not a file name (has no
// extension) becomes <tmp>.
func (n *normalizer) replacePath(p string) string {
	i := strings.LastIndexAny(p, `/\`)
	base := p[i+1:]
	if strings.Trim(p, `/\.~-`) == "" {
		return p // a lone separator, "//", "../": not a path worth folding
	}
	if base == "" {
		base = "<dir>" // a path to a directory, "a/b/"
	}
	if !n.tempPath.MatchString(p) {
		return base
	}
	if strings.Contains(base, ".") && !strings.HasPrefix(base, ".") {
		return base
	}
	return phTmp
}

// lazyRegexp is pattern compiled on its first use rather than at the
// process's start: the package's patterns took 5 to 10 ms of every gaffer
// command's start (GODEBUG=inittrace=1), listings included, and most
// commands match none. TestPatternsCompile compiles them all.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
