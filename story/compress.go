package story

import (
	"fmt"
	"slices"
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

// detail says how much a rendering keeps; each step sheds more.
type detail struct {
	sessions        bool // what each session said it did (Level 1: every session; Level 2: each phase's latest summary)
	level2          bool // sessions as each phase's latest summary, tagged with its phase
	recommendations bool
	why             bool
	todos           bool
	dropSessions    int // the oldest this many sessions are left out
	dropRecs        int // the oldest this many recommendations
	dropWhy         int // the reasons of the oldest this many decisions
	dropDecisions   int // the oldest this many decisions are left out
	dropMethods     int // then the oldest this many methods (they are in the code)
	dropDeps        int // then the oldest this many dependencies
}

// full is the detail every level starts from: everything an agent stated.
func full(level2 bool) detail {
	return detail{sessions: true, level2: level2, recommendations: true, why: true, todos: true}
}

// Level1 renders the records of one phase within budget tokens (0 means
// Level1Budget): every session's summary, every decision with its reason
// (a rejected alternative lives there), commands, methods, dependencies,
// requirements and recommendations, after Merge. Only when that is too
// long does it shed, least important first and one item at a time: the
// oldest session summaries, the open TODOs, the oldest recommendations,
// the oldest decisions' reasons, then the oldest decisions. Empty records
// give "". When the verbatim items alone do not fit, it leaves out the
// oldest methods and then the oldest dependencies (saying how many, and
// where they are) so the text still fits, and returns it with an error
// matching ErrOverBudget; only requirements and NOT TODOs are never left
// out.
func Level1(rs []Record, budget int) (string, error) {
	if budget <= 0 {
		budget = Level1Budget
	}
	return fit(Merge(rs), "This phase so far", budget, full(false))
}

// Level2 renders the story so far within budget tokens (0 means
// Level2Budget): the verbatim items, every live decision with its reason,
// the recommendations, the open TODOs and each phase's latest session
// summary (where a name given in passing lives) — everything an agent
// stated that is still live after Merge. Under budget pressure it sheds
// as Level1 does, least important first. Its size follows the live
// items, up to the budget, never the number of phases beyond it.
func Level2(rs []Record, budget int) (string, error) {
	if budget <= 0 {
		budget = Level2Budget
	}
	return fit(Merge(rs), "Story so far", budget, full(true))
}

// Level2Without is Level2 of before for the prompt of a phase that has
// records of its own already (this: a retry or a later review
// iteration): what this phase's records supersede or restate — a decision
// of the same topic, a method of the same name, a TODO closed — is left
// out, since Level 1 says the newer version, so the prompt neither says a
// thing twice nor contradicts itself.
func Level2Without(before, this []Record, budget int) (string, error) {
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
	return fit(m, "Story so far", budget, full(true))
}

// Level1Without is Level1 for a prompt that also carries shown (the
// story so far): an item shown there already, word for word on a line of
// its own, is left out (a decision's reason with it), so the prompt does
// not say it twice.
func Level1Without(rs []Record, shown string, budget int) (string, error) {
	if budget <= 0 {
		budget = Level1Budget
	}
	in := func(item string) bool { return strings.Contains(shown, "\n- "+strings.TrimSpace(item)+"\n") }
	shownDecision := func(d Decision) bool {
		return in(d.What) || d.Why != "" && strings.Contains(shown, "\n- "+strings.TrimSpace(d.What)+" (why: "+strings.TrimSpace(d.Why)+")\n")
	}
	m := Merge(rs).filter(func(t Tagged[string]) bool { return !in(t.Item) },
		func(t Tagged[Decision]) bool { return !shownDecision(t.Item) })
	return fit(m, "This phase so far", budget, full(false))
}

func fit(m Merged, title string, budget int, d detail) (string, error) {
	if len(m.Verbatim())+len(m.Decisions)+len(m.Todos)+len(m.Other)+len(m.Recommendations)+len(m.Sessions) == 0 {
		return "", nil
	}
	sessions := len(m.Sessions)
	if d.level2 {
		sessions = len(m.Summaries)
	}
	// Least important first, one item at a time.
	steps := []func(*detail) bool{
		func(d *detail) bool { r := d.sessions && d.dropSessions < sessions; d.dropSessions++; return r },
		func(d *detail) bool { r := d.todos; d.todos = false; return r },
		func(d *detail) bool {
			r := d.recommendations && d.dropRecs < len(m.Recommendations)
			d.dropRecs++
			return r
		},
		func(d *detail) bool { r := d.why && d.dropWhy < len(m.Decisions); d.dropWhy++; return r },
		func(d *detail) bool { r := d.dropDecisions < len(m.Decisions); d.dropDecisions++; return r },
	}
	var over error
	for {
		text := render(m, title, d)
		if Tokens(text) <= budget {
			return text, over
		}
		shed := false
		for _, st := range steps {
			if st(&d) {
				shed = true
				break
			}
		}
		if shed {
			continue
		}
		if over == nil {
			over = fmt.Errorf("%w: %d tokens of items kept verbatim, budget %d; the oldest methods and dependencies are left out", ErrOverBudget, Tokens(text), budget)
		}
		switch {
		case d.dropMethods < len(m.Methods):
			d.dropMethods++
		case d.dropDeps < len(m.Dependencies):
			d.dropDeps++
		default:
			return text, fmt.Errorf("%w: %d tokens of requirements and NOT TODOs alone, budget %d", ErrOverBudget, Tokens(text), budget)
		}
	}
}

// render writes the story compactly: a heading per kind of item, one item
// a line, nothing about when or by whom (that is in the story/ files)
// but a summary's phase.
func render(m Merged, title string, d detail) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", title)
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
	if d.sessions {
		if d.level2 {
			if n := min(d.dropSessions, len(m.Summaries)); n < len(m.Summaries) {
				b.WriteString("What each phase said it did:\n")
				if n > 0 {
					fmt.Fprintf(&b, "- (%d older left out; see the story/ files)\n", n)
				}
				for _, t := range m.Summaries[n:] {
					fmt.Fprintf(&b, "- phase %d: %s\n", t.Phase, t.Item)
				}
			}
		} else if n := min(d.dropSessions, len(m.Sessions)); n < len(m.Sessions) {
			b.WriteString("Sessions:\n")
			if n > 0 {
				fmt.Fprintf(&b, "- (%d older left out; see the story/ files)\n", n)
			}
			for _, t := range m.Sessions[n:] {
				fmt.Fprintf(&b, "- %s\n", t.Item)
			}
		}
	}
	list("User requirements", m.Requirements, 0)
	list("Dependencies", m.Dependencies, d.dropDeps)
	list("Methods", m.Methods, d.dropMethods)
	commands := m.NotTodos
	if d.todos {
		commands = append(append(slices.Clone(commands), m.Todos...), m.Other...)
	}
	list("Commands", commands, 0)
	if n := min(d.dropDecisions, len(m.Decisions)); n < len(m.Decisions) || n > 0 {
		b.WriteString("Decisions:\n")
		if n > 0 {
			fmt.Fprintf(&b, "- (%d older left out; see the story/ files)\n", n)
		}
		for i, t := range m.Decisions[n:] {
			fmt.Fprintf(&b, "- %s", t.Item.What)
			if d.why && n+i >= d.dropWhy && t.Item.Why != "" {
				fmt.Fprintf(&b, " (why: %s)", t.Item.Why)
			}
			b.WriteString("\n")
		}
	}
	if d.recommendations {
		list("Recommendations", m.Recommendations, d.dropRecs)
	}
	return b.String()
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
	vocab := words(sourceText(rs) + render(m, "Story so far This phase", full(false)) + render(m, "", full(true)) + " phase phases left older out see the story/ files")
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
