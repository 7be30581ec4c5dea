package recovery

import (
	"regexp"
	"strings"
)

// Deferral by meaning (issue 33). A sentence of a revision puts
// something off when it says so in any of these ways — not only with the
// words "deferred" or "later": it moves the work in time ("lands in the
// next milestone", "can wait", "afterwards"), to another unit of work
// ("a separate change", "another plan", "a follow-up ticket"), to someone
// or somewhere else ("handled separately", "tracked in the backlog"), out
// of scope ("out of scope for now", "not part of this phase"), says the
// work is not delivered ("we won't implement Sub"), or drops or weakens
// it ("skip", "only", "mock", "stub out"). The stronger check does not
// read prose at all: a required name that no revised task promises to
// deliver is refused whatever the sentences say (CheckRevision).

// deferralMeanings are the ways a sentence puts work off, each a class
// of paraphrases.
var deferralMeanings = []struct {
	name string
	re   func() *regexp.Regexp
}{
	{"moved in time", lazyRegexp(`(?i)\b(?:defer(?:s|red|ring|ral)?|postpon(?:e|es|ed|ing)|later|afterwards?|eventually|subsequently|down the road|in due course|at a later (?:date|stage|point|time)|not (?:yet|now|at this (?:stage|point))|for now|for the time being|until later|can wait|(?:will|can|must|should) wait|wait(?:s|ing)? (?:for|until)|hold(?:s|ing)? off|put(?:s|ting)? off|push(?:es|ed|ing)? (?:back|out)|punt(?:s|ed|ing)?|parked|revisit(?:s|ed|ing)?|come back to)\b`)},
	{"a later unit of work", lazyRegexp(`(?i)\b(?:next|later|future|subsequent|upcoming|coming|following|another|separate|follow[- ]?up)\s+(?:\w+\s+){0,2}?(?:milestones?|releases?|versions?|sprints?|iterations?|cycles?|quarters?|plans?|prs?|pull requests?|tickets?|issues?|phases?|epics?|stor(?:y|ies)|efforts?|rounds?|patch(?:es)?|changesets?|tasks?)\b`)},
	{"follow-up or backlog", lazyRegexp(`(?i)\b(?:follow[- ]?ups?|backlog|roadmap|wishlist|nice[- ]to[- ]have)\b`)},
	{"elsewhere", lazyRegexp(`(?i)\b(?:separately|elsewhere|someone else|another team|other team|tracked (?:in|by|as|under))\b`)},
	{"out of scope", lazyRegexp(`(?i)\b(?:out of (?:scope|band)|beyond (?:the |this )?scope|outside (?:the |this )?scope|not (?:in|part of|within) (?:the |this )?(?:scope|phase|plan|task|change|pr|milestone|release)|de-?scoped|excluded)\b`)},
	{"not delivered", lazyRegexp(`(?i)\b(?:won't|will not|doesn't|does not|don't|do not|not|never)\s+(?:\w+\s+){0,2}?(?:implement(?:s|ed|ing)?|deliver(?:s|ed|ing)?|includ(?:e|es|ed|ing)|ship(?:s|ped|ping)?|cover(?:s|ed|ing)?|build(?:s|ing)?|support(?:s|ed|ing)?|handl(?:e|es|ed|ing)|provid(?:e|es|ed|ing)|address(?:es|ed|ing)?)\b`)},
	{"dropped or weakened", lazyRegexp(`(?i)\b(?:drop(?:s|ped|ping)?|remove[sd]?|omit(?:s|ted|ting)?|leave out|left out|not (?:be )?(?:needed|required|done)|no longer|skip(?:s|ped|ping)?|disabl(?:e|es|ed|ing)|comment(?:s|ed)? out|stub(?:s|bed|bing)? out|simplif(?:y|ied|ies|ying)|partial(?:ly)?|only|mock(?:s|ed|ing)?|fake[sd]?|ignor(?:e|es|ed|ing)|relax(?:es|ed|ing)?|loosen(?:s|ed|ing)?)\b`)},
}

// Defers reports whether sentence puts work off, drops or weakens it,
// and how ("moved in time", "a later unit of work", …); "" when it does
// not.
func Defers(sentence string) string {
	for _, d := range deferralMeanings {
		if d.re().MatchString(sentence) {
			return d.name
		}
	}
	return ""
}

// promised reports whether the revised tasks' text promises to deliver
// r: a sentence of it names r (a file also by its base name) and does not
// put it off, or is a sentence of the anchor itself (anchorNorm, its
// text with white space folded).
func promised(taskSentences []string, anchorNorm string, r Required) bool {
	for _, s := range taskSentences {
		if (mentions(s, r) || r.Kind == "file" && mentions(s, Required{Kind: "file", Text: baseName(r.Text)})) &&
			(Defers(s) == "" || strings.Contains(anchorNorm, normSpace(s))) {
			return true
		}
	}
	return false
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
