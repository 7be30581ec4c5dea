package story

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// The budgets of the two compression levels, in tokens (Tokens).
const (
	Level1Budget = 4000 // one phase's records, across attempts and review iterations
	Level2Budget = 1500 // the story so far, at a phase boundary
)

// Tokens approximates the token count of text offline: one token per four
// bytes of UTF-8, rounded up.
func Tokens(text string) int { return (len(text) + 3) / 4 }

// Need is the plan a story serves: the goal, and the text of each
// phase's tasks (titles, bodies, files), phase 1 first. A unit of the
// story is needed when the goal or a task of a phase after its own names
// it: the work still to come, and the work it was stated for. Under
// budget pressure a needed unit outweighs one that is not (need.go).
// The zero Need judges units by constraints, names and recency alone.
type Need struct {
	Goal   string
	Phases []string
}

// after is the text of the goal and of the tasks of the phases after
// phase (1-based).
func (n Need) after(phase int) string {
	var b strings.Builder
	b.WriteString(n.Goal + "\n")
	for i := max(phase, 0); i < len(n.Phases); i++ {
		b.WriteString(n.Phases[i] + "\n")
	}
	return b.String()
}

// Level1 renders the records of one phase within budget tokens (0 means
// Level1Budget): every session's summary, every decision with its reason
// (a rejected alternative lives there), commands, methods, dependencies,
// requirements and recommendations, after Merge. Only when that is too
// long does it shed, one unit at a time, what the work to come (need)
// needs least (shedding by need, need.go). Empty records give "". When
// the verbatim items alone do not fit, it leaves out the oldest methods
// and then the oldest dependencies (saying how many, and where they are)
// so the text still fits, and returns it with an error matching
// ErrOverBudget; only requirements and NOT TODOs are never left out.
func Level1(rs []Record, need Need, budget int) (string, error) {
	if budget <= 0 {
		budget = Level1Budget
	}
	return fit(Merge(rs), "This phase so far", budget, false, need)
}

// Level2 renders the story so far within budget tokens (0 means
// Level2Budget): the verbatim items, every live decision with its reason,
// the recommendations, the open TODOs, each phase's latest session
// summary (where a name given in passing lives) and what each review
// said — everything an agent stated that is still live after Merge.
// Under budget pressure it sheds as Level1 does, by need, not by kind:
// a sentence that states a constraint or that the work to come names
// stays, whatever record holds it, while a routine one goes. Its size
// follows the live items, up to the budget, never the number of phases
// beyond it.
func Level2(rs []Record, need Need, budget int) (string, error) {
	if budget <= 0 {
		budget = Level2Budget
	}
	return fit(Merge(rs), "Story so far", budget, true, need)
}

// Level2Without is Level2 of before for the prompt of a phase that has
// records of its own already (this: a retry or a later review
// iteration): what this phase's records supersede or restate — a decision
// of the same topic, a method of the same name, a TODO closed — is left
// out, since Level 1 says the newer version, so the prompt neither says a
// thing twice nor contradicts itself.
func Level2Without(before, this []Record, need Need, budget int) (string, error) {
	if budget <= 0 {
		budget = Level2Budget
	}
	phases := map[int]bool{}
	for _, r := range this {
		phases[r.Phase] = true
	}
	m := Merge(append(slices.Clone(before), this...))
	m = m.filter(func(t Tagged[string]) bool { return !phases[t.Phase] },
		func(t Tagged[Decision]) bool { return !phases[t.Phase] })
	return fit(m, "Story so far", budget, true, need)
}

// Level1Without is Level1 for a prompt that also carries shown (the
// story so far): an item shown there already, word for word on a line of
// its own, is left out (a decision's reason with it), so the prompt does
// not say it twice.
func Level1Without(rs []Record, shown string, need Need, budget int) (string, error) {
	if budget <= 0 {
		budget = Level1Budget
	}
	in := func(item string) bool { return strings.Contains(shown, "\n- "+strings.TrimSpace(item)+"\n") }
	shownDecision := func(d Decision) bool {
		return in(d.What) || d.Why != "" && strings.Contains(shown, "\n- "+strings.TrimSpace(d.What)+" (why: "+strings.TrimSpace(d.Why)+")\n")
	}
	m := Merge(rs).filter(func(t Tagged[string]) bool { return !in(t.Item) },
		func(t Tagged[Decision]) bool { return !shownDecision(t.Item) })
	return fit(m, "This phase so far", budget, false, need)
}

// unitKind is the kind of a unit the story may shed, in the order that
// breaks a tie between equal scores (a reason before its decision).
type unitKind int

const (
	uSession unitKind = iota // a sentence of a session line (Level 1) or of a phase's summary (Level 2)
	uReview                  // a sentence of what a review said (Level 2)
	uRec
	uTodo
	uOther
	uWhy
	uWhat
)

// unit is one thing the story may shed: the item i of its list (and
// sentence j of it, for sessions and reviews).
type unit struct {
	kind  unitKind
	i, j  int
	phase int
	text  string
	score float64
}

// view is what a rendering keeps.
type view struct {
	level2                bool
	heads                 []string   // Level 1: each session line's head ("attempt 1, iteration 2")
	sessions              [][]string // the sentences of each session line (Level 1) or phase summary (Level 2)
	reviews               [][]string // the sentences of each review (Level 2)
	gone                  map[[3]int]bool
	shed                  int
	dropMethods, dropDeps int
}

func newView(m Merged, level2 bool) view {
	v := view{level2: level2, gone: map[[3]int]bool{}}
	if level2 {
		for _, t := range m.Summaries {
			v.sessions = append(v.sessions, sentencesOf(t.Item))
		}
		for _, t := range m.Reviews {
			v.reviews = append(v.reviews, sentencesOf(t.Item))
		}
		return v
	}
	for _, t := range m.Sessions {
		head, body, _ := strings.Cut(t.Item, ": ")
		v.heads = append(v.heads, head)
		v.sessions = append(v.sessions, sentencesOf(body))
	}
	return v
}

func (v view) kept(k unitKind, i, j int) bool { return !v.gone[[3]int{int(k), i, j}] }

// units lists what v may shed, scored (need.go), in the order it is
// shed: lowest score first, then oldest, then by kind.
func units(m Merged, v view, need Need) []unit {
	var us []unit
	sessions := m.Sessions
	if v.level2 {
		sessions = m.Summaries
	}
	for i, ss := range v.sessions {
		for j, s := range ss {
			us = append(us, unit{kind: uSession, i: i, j: j, phase: sessions[i].Phase, text: s})
		}
	}
	for i, ss := range v.reviews {
		for j, s := range ss {
			us = append(us, unit{kind: uReview, i: i, j: j, phase: m.Reviews[i].Phase, text: s})
		}
	}
	for i, t := range m.Recommendations {
		us = append(us, unit{kind: uRec, i: i, phase: t.Phase, text: t.Item})
	}
	for i, t := range m.Todos {
		us = append(us, unit{kind: uTodo, i: i, phase: t.Phase, text: t.Item})
	}
	for i, t := range m.Other {
		us = append(us, unit{kind: uOther, i: i, phase: t.Phase, text: t.Item})
	}
	for i, t := range m.Decisions {
		if t.Item.Why != "" {
			us = append(us, unit{kind: uWhy, i: i, phase: t.Phase, text: t.Item.Why})
		}
		us = append(us, unit{kind: uWhat, i: i, phase: t.Phase, text: t.Item.What})
	}
	score(us, need)
	slices.SortStableFunc(us, func(a, b unit) int {
		switch {
		case a.score != b.score:
			return cmp.Compare(a.score, b.score)
		case a.phase != b.phase:
			return a.phase - b.phase
		case a.kind != b.kind:
			return int(a.kind) - int(b.kind)
		case a.i != b.i:
			return a.i - b.i
		}
		return a.j - b.j
	})
	return us
}

// score sets each unit's score: a constraint, a word the work to come
// shares with it and few other units have, a name, its kind and its
// recency (need.go).
func score(us []unit, need Need) {
	ts := make([]map[string]bool, len(us))
	df := map[string]int{}
	last := 1
	for k, u := range us {
		ts[k] = terms(u.text)
		for t := range ts[k] {
			df[t]++
		}
		last = max(last, u.phase)
	}
	wants := map[int]map[string]bool{}
	rare := max(2, len(us)/10)
	why := map[int]float64{}
	for k := range us {
		u := &us[k]
		if Constraint(u.text) {
			u.score += wConstraint
		}
		want, ok := wants[u.phase]
		if !ok {
			want = terms(need.after(u.phase))
			wants[u.phase] = want
		}
		n := 0
		for t := range ts[k] {
			if want[t] && df[t] <= rare {
				n++
			}
		}
		if n > 0 {
			u.score += wNeeded + min(float64(n-1)*wNeededMore, wNeededMax)
		}
		if givesName(u.text) {
			u.score += wName
		}
		u.score += kindWeight[u.kind]
		u.score += wRecency * float64(max(u.phase, 0)) / float64(last)
		if u.kind == uWhy {
			why[u.i] = u.score
		}
	}
	// A decision stays at least as long as its reason.
	for k := range us {
		if u := &us[k]; u.kind == uWhat {
			u.score = max(u.score, why[u.i])
		}
	}
}

func fit(m Merged, title string, budget int, level2 bool, need Need) (string, error) {
	if len(m.Verbatim())+len(m.Decisions)+len(m.Todos)+len(m.Other)+len(m.Recommendations)+len(m.Sessions)+len(m.Reviews) == 0 {
		return "", nil
	}
	v := newView(m, level2)
	text := render(m, title, v)
	if Tokens(text) <= budget {
		return text, nil
	}
	us := units(m, v, need)
	shed := func(k int) view {
		w := v
		w.gone = make(map[[3]int]bool, k)
		for _, u := range us[:k] {
			w.gone[[3]int{int(u.kind), u.i, u.j}] = true
		}
		w.shed = k
		return w
	}
	// The fewest units shed that fit: the text shrinks as more go (but
	// for the count in its note), so search, then step past a count
	// that grew by a digit.
	k := sort.Search(len(us)+1, func(k int) bool { return k > 0 && Tokens(render(m, title, shed(k))) <= budget })
	k = min(k, len(us))
	for ; k < len(us) && Tokens(render(m, title, shed(k))) > budget; k++ {
	}
	v = shed(k)
	if text = render(m, title, v); Tokens(text) <= budget {
		return text, nil
	}
	over := fmt.Errorf("%w: %d tokens of items kept verbatim, budget %d; the oldest methods and dependencies are left out", ErrOverBudget, Tokens(text), budget)
	for {
		switch {
		case v.dropMethods < len(m.Methods):
			v.dropMethods++
		case v.dropDeps < len(m.Dependencies):
			v.dropDeps++
		default:
			return text, fmt.Errorf("%w: %d tokens of requirements and NOT TODOs alone, budget %d", ErrOverBudget, Tokens(text), budget)
		}
		if text = render(m, title, v); Tokens(text) <= budget {
			return text, over
		}
	}
}

// render writes the story compactly: a heading per kind of item, one item
// a line, nothing about when or by whom (that is in the story/ files)
// but a summary's or review's phase.
func render(m Merged, title string, v view) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", title)
	if v.shed > 0 {
		fmt.Fprintf(&b, "(%d items left out: see the story/ files)\n", v.shed)
	}
	list := func(head string, l []Tagged[string], dropped int) {
		dropped = min(dropped, len(l))
		if len(l) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", head)
		if dropped > 0 {
			fmt.Fprintf(&b, "- (%d older left out; see the story/ files)\n", dropped)
		}
		for _, t := range l[dropped:] {
			fmt.Fprintf(&b, "- %s\n", t.Item)
		}
	}
	// lines writes each item's kept sentences after its lead; an item
	// with none kept is left out, as is the heading of a list with none.
	lines := func(heading string, k unitKind, ss [][]string, lead func(i int) string) {
		started := false
		for i, sent := range ss {
			var keep []string
			for j, s := range sent {
				if v.kept(k, i, j) {
					keep = append(keep, s)
				}
			}
			if len(keep) == 0 {
				continue
			}
			if !started {
				b.WriteString(heading + ":\n")
				started = true
			}
			fmt.Fprintf(&b, "- %s%s\n", lead(i), strings.Join(keep, " "))
		}
	}
	if v.level2 {
		lines("What each phase said it did", uSession, v.sessions, func(i int) string { return fmt.Sprintf("phase %d: ", m.Summaries[i].Phase) })
		lines("What review said", uReview, v.reviews, func(i int) string { return fmt.Sprintf("phase %d: ", m.Reviews[i].Phase) })
	} else {
		lines("Sessions", uSession, v.sessions, func(i int) string { return v.heads[i] + ": " })
	}
	keptOf := func(k unitKind, l []Tagged[string]) []Tagged[string] {
		var out []Tagged[string]
		for i, t := range l {
			if v.kept(k, i, 0) {
				out = append(out, t)
			}
		}
		return out
	}
	list("User requirements", m.Requirements, 0)
	list("Dependencies", m.Dependencies, v.dropDeps)
	list("Methods", m.Methods, v.dropMethods)
	commands := append(append(slices.Clone(m.NotTodos), keptOf(uTodo, m.Todos)...), keptOf(uOther, m.Other)...)
	list("Commands", commands, 0)
	started := false
	for i, t := range m.Decisions {
		if !v.kept(uWhat, i, 0) {
			continue
		}
		if !started {
			b.WriteString("Decisions:\n")
			started = true
		}
		fmt.Fprintf(&b, "- %s", t.Item.What)
		if t.Item.Why != "" && v.kept(uWhy, i, 0) {
			fmt.Fprintf(&b, " (why: %s)", t.Item.Why)
		}
		b.WriteString("\n")
	}
	list("Recommendations", keptOf(uRec, m.Recommendations), 0)
	return b.String()
}

// sentencesOf splits text into sentences: after '.', '!' or '?' followed
// by white space, and at line ends.
func sentencesOf(text string) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			add(text[start:i])
			start = i + 1
		case (c == '.' || c == '!' || c == '?') && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\t' || text[i+1] == '\n'):
			add(text[start : i+1])
			start = i + 1
		}
	}
	add(text[start:])
	return out
}

// CheckSummary decides whether a summarizer's text may stand in for the
// deterministic compression of rs: it must fit budget, keep every verbatim
// item of rs word for word, and hold no word (of three letters or more,
// or any identifier) that is absent from the sources — the records and
// the section headings the deterministic text uses. It returns nil or an
// error matching ErrRejectedSummary that says why.
func CheckSummary(summary string, rs []Record, budget int) error {
	if t := Tokens(summary); t > budget {
		return fmt.Errorf("%w: %d tokens, budget %d", ErrRejectedSummary, t, budget)
	}
	m := Merge(rs)
	for _, v := range m.Verbatim() {
		if !strings.Contains(summary, v) {
			return fmt.Errorf("%w: it lost %q", ErrRejectedSummary, v)
		}
	}
	vocab := words(sourceText(rs) + render(m, "Story so far This phase", newView(m, false)) + render(m, "", newView(m, true)) +
		" phase phases left older out see the story/ files items")
	for w := range words(summary) {
		if _, ok := vocab[w]; !ok {
			return fmt.Errorf("%w: %q is not in its sources", ErrRejectedSummary, w)
		}
	}
	return nil
}

// sourceText is every string of rs.
func sourceText(rs []Record) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Summary + "\n")
		for _, d := range r.Decisions {
			b.WriteString(d.Topic + "\n" + d.What + "\n" + d.Why + "\n")
		}
		for _, l := range [][]string{r.Commands, r.Methods, r.Dependencies, r.Requirements, r.Recommendations} {
			b.WriteString(strings.Join(l, "\n") + "\n")
		}
	}
	return b.String()
}

// words returns the lower-cased words of text: runs of letters, digits
// and '_', '.', '-' (so identifiers and package names are one word), with
// trailing dots trimmed; words shorter than three letters and numbers are
// left out.
func words(text string) map[string]struct{} {
	out := map[string]struct{}{}
	f := strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-' || r == '/')
	})
	for _, w := range f {
		w = strings.ToLower(strings.Trim(w, ".-/"))
		if len([]rune(w)) < 3 || strings.IndexFunc(w, unicode.IsLetter) < 0 {
			continue
		}
		out[w] = struct{}{}
	}
	return out
}

// Retention scores what text keeps of facts: the facts found in it (each
// compared with white space collapsed) and the share of facts kept, 1 when
// there are none.
func Retention(text string, facts []string) (kept []string, share float64) {
	t := strings.Join(strings.Fields(text), " ")
	for _, f := range facts {
		if strings.Contains(t, strings.Join(strings.Fields(f), " ")) {
			kept = append(kept, f)
		}
	}
	if len(facts) == 0 {
		return kept, 1
	}
	return kept, float64(len(kept)) / float64(len(facts))
}

// Invented returns the facts of candidates that text holds but sources do
// not: the benchmark's invented-fact count (a must-keep fact that appears
// in a prompt without appearing in the records or plan that prompt was
// built from).
func Invented(text, sources string, candidates []string) []string {
	t := strings.Join(strings.Fields(text), " ")
	src := strings.Join(strings.Fields(sources), " ")
	var out []string
	for _, c := range candidates {
		c = strings.Join(strings.Fields(c), " ")
		if strings.Contains(t, c) && !strings.Contains(src, c) {
			out = append(out, c)
		}
	}
	return out
}
