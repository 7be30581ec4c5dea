package story

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// What a later record supersedes beyond a decision's topic and a
// method's name: a requirement the user changed, and a method renamed.
// Both are judged from the records' own words, with no model.

// valueRe is a word that carries a value: it holds a digit (14, 30s, p99,
// 02:00, v2).
var valueRe = regexp.MustCompile(`[0-9]`)

// reqWords splits a requirement into its content words (lower-cased, of
// three letters or more, not a stop word, not a value) and its values.
func reqWords(s string) (content, values map[string]bool) {
	content, values = map[string]bool{}, map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != ':' && r != '%' && r != '_'
	}) {
		w = strings.Trim(w, ".:")
		switch {
		case w == "":
		case valueRe.MatchString(w):
			values[w] = true
		case len(w) >= 3 && !stopWords[w]:
			content[w] = true
		}
	}
	return content, values
}

// SupersedesRequirement reports whether requirement newer replaces older:
// the same requirement with another value ("Keep audit logs for 14 days."
// then "Keep audit logs for 30 days."). Every content word of older is
// in newer, which adds none of its own but words that say a change
// ("now", "instead", "raised", …), and the values differ. Two
// requirements about different things ("reads must finish in 5 ms",
// "writes must finish in 20 ms"), or one narrower than the other ("10
// requests per second", "100 requests per second for admins"), both
// stay; so does a paraphrase (docs/context.md, what is not caught).
func SupersedesRequirement(newer, older string) bool {
	if norm(newer) == norm(older) {
		return false
	}
	ca, va := reqWords(older)
	cb, vb := reqWords(newer)
	if len(ca) < 2 || len(va) == 0 || len(vb) == 0 {
		return false
	}
	for w := range cb {
		if !ca[w] && !changeWords[w] {
			return false // a qualifier ("for admins"): another requirement
		}
	}
	for w := range ca {
		if !cb[w] {
			return false
		}
	}
	for v := range vb {
		if !va[v] {
			return true
		}
	}
	for v := range va {
		if !vb[v] {
			return true
		}
	}
	return false
}

// Restates reports whether text restates requirement older, which newer
// replaced: it holds older word for word, or every content word of older
// and the value that changed, without the new value ("The user wants
// audit logs kept for 14 days." restates "Keep audit logs for 14 days."
// once "Keep audit logs for 30 days." replaced it).
func Restates(text, older, newer string) bool {
	if strings.Contains(norm(text), norm(older)) {
		return true
	}
	ct, vt := reqWords(text)
	co, vo := reqWords(older)
	_, vn := reqWords(newer)
	if len(co) == 0 {
		return false
	}
	for w := range co {
		if !ct[w] {
			return false
		}
	}
	changed := 0
	for v := range vo {
		if !vn[v] {
			if !vt[v] {
				return false
			}
			changed++
		}
	}
	for v := range vn {
		if !vo[v] && vt[v] {
			return false
		}
	}
	return changed > 0
}

// A rename as agents state it: "rename FetchAll to ListItems", "FetchAll
// was renamed to ListItems", "FetchAll → ListItems", "ListItems replaces
// FetchAll". Names may be dotted and backticked, with or without a
// parameter list.
const identPat = "`?([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\\([^)]*\\))?`?"

var renameRes = []struct {
	re       *regexp.Regexp
	reversed bool // the new name comes first
}{
	{regexp.MustCompile(`(?i:renam(?:e|ed|es|ing))\s+(?:(?i:the|method|function|func|type)\s+)*` + identPat + `\s+(?i:to|as|into)\s+(?:(?i:the|method|function|func|type)\s+)*` + identPat), false},
	{regexp.MustCompile(identPat + `\s+(?i:is|was|has been|gets|got)\s+(?i:now\s+)?(?i:renamed)\s+(?i:to|as|into)\s+` + identPat), false},
	{regexp.MustCompile(identPat + `\s*(?:→|->|=>)\s*` + identPat), false},
	{regexp.MustCompile(identPat + `\s+(?i:replaces|supersedes)\s+(?:(?i:the|old|method|function|func)\s+)*` + identPat), true},
}

// rename is one method renamed: its old name and its new one, each
// whole (with the receiver, Client.FetchAll) and bare (FetchAll).
type rename struct {
	oldFull, newFull, oldBare, newBare string
}

// renamesIn returns the renames text states of the methods in live: a
// rename whose old name is not a live method is no rename of ours.
func renamesIn(text string, live []Tagged[string]) []rename {
	if len(live) == 0 || !mayRename(text) {
		return nil
	}
	var out []rename
	for _, r := range renameRes {
		for _, m := range r.re.FindAllStringSubmatch(text, -1) {
			oldN, newN := m[1], m[2]
			if r.reversed {
				oldN, newN = newN, oldN
			}
			if oldN == newN {
				continue
			}
			for _, t := range live {
				name := methodName(t.Item)
				if name != oldN && bare(name) != oldN {
					continue
				}
				rn := rename{oldFull: name, oldBare: bare(name), newBare: bare(newN), newFull: newN}
				if !strings.Contains(newN, ".") && strings.Contains(name, ".") {
					rn.newFull = name[:strings.LastIndexByte(name, '.')+1] + newN
				}
				if !slices.Contains(out, rn) {
					out = append(out, rn)
				}
			}
		}
	}
	return out
}

// mayRename is the cheap test before the rename patterns: text has one
// of their words or arrows.
func mayRename(text string) bool {
	l := strings.ToLower(text)
	for _, k := range []string{"renam", "→", "->", "=>", "replaces", "supersedes"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

// bare is a dotted name's last part.
func bare(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// apply writes text with the old name replaced by the new one wherever
// it stands as a whole identifier, and a statement of the rename
// ("renamed ListItems to ListItems" once replaced) reduced to the new
// name.
func (r rename) apply(text string) string {
	text = replaceIdent(text, r.oldFull, r.newFull)
	if distinctive(r.oldBare) {
		text = replaceIdent(text, r.oldBare, r.newBare)
	} else {
		// "Run" alone is also an English word: only a call is the method.
		text = strings.ReplaceAll(replaceIdent(text+"\x00", r.oldBare+"(", r.newBare+"("), "\x00", "")
	}
	for _, re := range renameRes {
		if !mayRename(text) {
			break
		}
		text = re.re.ReplaceAllStringFunc(text, func(s string) string {
			m := re.re.FindStringSubmatch(s)
			if m[1] != m[2] {
				return s
			}
			if unicode.IsUpper(rune(s[0])) {
				return "Named " + m[1]
			}
			return "named " + m[1]
		})
	}
	return text
}

// distinctive reports whether a bare name cannot be an ordinary word:
// camelCase inside, or with a '_' or a digit (FetchAll, fetch_all, V2;
// not Run or Get).
func distinctive(name string) bool {
	if strings.ContainsAny(name, "_0123456789") {
		return true
	}
	for i := 1; i < len(name); i++ {
		if name[i] >= 'A' && name[i] <= 'Z' {
			return true
		}
	}
	return false
}

// replaceIdent replaces old with new in text where old is a whole
// identifier: no letter, digit or '_' right before or after it.
func replaceIdent(text, old, new string) string {
	if old == "" || old == new {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, old)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		e := i + len(old)
		if (i == 0 || !identByte(text[i-1])) && (e == len(text) || !identByte(text[e])) {
			b.WriteString(text[:i] + new)
		} else {
			b.WriteString(text[:e])
		}
		text = text[e:]
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// changeWords are the words a changed requirement may add to the old
// one's: they say that it changed, not what it is about.
var changeWords = map[string]bool{"instead": true, "rather": true, "changed": true, "change": true, "updated": true, "update": true,
	"raised": true, "raise": true, "lowered": true, "lower": true, "increased": true, "increase": true, "decreased": true, "decrease": true,
	"reduced": true, "reduce": true, "extended": true, "extend": true, "shortened": true, "previously": true, "formerly": true,
	"was": true, "were": true, "longer": true, "shorter": true, "fewer": true, "bumped": true}

// stopWords are words too common to tell two requirements, or a story
// item and the work to come, apart.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for with from that this these those into onto over under about
		than then when what which while where who whom whose why how all any each every some such both either neither
		are was were been being has have had having does did doing done its our your their they them there here
		will would shall should could can may might must not only also just very more most less least much many
		new now old one two use used uses using make made makes making add added adds adding get gets got set sets
		work works worked working run runs ran running phase phases task tasks step steps code file files test tests
		tested testing implement implemented implements implementing implementation write wrote written writes writing
		update updated updates updating change changed changes changing support supports supported handle handles handled
		keep keeps kept need needs needed like same other another before after again still already yet done via per
		first last next later today across within without upon onto ones it's isn't don't doesn't won't`) {
		m[w] = true
	}
	return m
}()
