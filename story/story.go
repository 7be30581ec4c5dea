package story

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Decision is one choice an agent made and why. Topic, when set, names
// what the decision is about: a later decision on the same topic
// supersedes an earlier one.
type Decision struct {
	Topic string `json:"topic,omitempty" yaml:"topic"`
	What  string `json:"what" yaml:"what" script:"required"`
	Why   string `json:"why,omitempty" yaml:"why"`
}

// Facts is the structured part of a session's report: what a later
// agent needs to know.
type Facts struct {
	Decisions []Decision `json:"decisions,omitempty" yaml:"decisions"`
	// Commands are "TODO: …" and "NOT TODO: …" lines (a "DONE: …" line
	// closes the TODO of the same text).
	Commands []string `json:"commands,omitempty" yaml:"commands"`
	// Methods are the names and signatures created, e.g.
	// "TTSService.Synthesize(text string) ([]byte, error)".
	Methods      []string `json:"methods,omitempty" yaml:"methods"`
	Dependencies []string `json:"dependencies,omitempty" yaml:"dependencies"`
	// Requirements are the user's requirements, verbatim.
	Requirements    []string `json:"requirements,omitempty" yaml:"requirements"`
	Recommendations []string `json:"recommendations,omitempty" yaml:"recommendations"`
}

// IsZero reports whether f holds nothing.
func (f Facts) IsZero() bool {
	return len(f.Decisions)+len(f.Commands)+len(f.Methods)+len(f.Dependencies)+len(f.Requirements)+len(f.Recommendations) == 0
}

// Record is one session's entry in the story.
type Record struct {
	Seq       int    `json:"seq"`
	Role      string `json:"role"`
	Phase     int    `json:"phase"` // 1-based; 0 before the first phase (the user at approval)
	Attempt   int    `json:"attempt,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Facts
}

// Name is the record's file name in the story directory:
// NNN-<role>-p<phase>-a<attempt>.json. It depends only on the record's
// sequence number, role, phase and attempt, so writing the same record
// again (a resumed phase) replaces the file instead of adding one.
func (r Record) Name() string {
	return fmt.Sprintf("%03d-%s-p%d-a%d.json", r.Seq, r.Role, r.Phase, r.Attempt)
}

// Encode returns the record's file content: indented JSON and a newline.
// '<', '>' and '&' stay as they are (encoding/json would write \u003c),
// since agents read these files: plugins/<name>/<version> must reach
// them as written.
func (r Record) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("story: encode record %d: %w", r.Seq, err)
	}
	return b.Bytes(), nil
}

// Decode reads a record written by Encode.
func Decode(data []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	if r.Seq <= 0 || r.Role == "" {
		return Record{}, fmt.Errorf("%w: seq and role are required", ErrBadRecord)
	}
	return r, nil
}

// Hash is the hex SHA-256 of the record's encoding: the state keeps the
// latest one, not the records.
func Hash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// Sort orders records by sequence number.
func Sort(rs []Record) {
	slices.SortStableFunc(rs, func(a, b Record) int { return a.Seq - b.Seq })
}

// commandKey splits a command into its kind (TODO, NOT TODO, DONE, or ""
// for anything else) and its normalised text.
func commandKey(c string) (kind, text string) {
	t := strings.TrimSpace(c)
	u := strings.ToUpper(t)
	for _, k := range []string{"NOT TODO", "TODO", "DONE"} {
		if strings.HasPrefix(u, k) {
			rest := strings.TrimLeft(t[len(k):], ":- ")
			return k, norm(rest)
		}
	}
	return "", norm(t)
}

// IsNotTodo reports whether c is a NOT TODO command.
func IsNotTodo(c string) bool { k, _ := commandKey(c); return k == "NOT TODO" }

// methodName is a method's name without its parameters: a later method of
// the same name supersedes (its signature changed).
func methodName(m string) string {
	if i := strings.IndexByte(m, '('); i > 0 {
		return strings.TrimSpace(m[:i])
	}
	return strings.TrimSpace(m)
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// Tagged is an item with the phase it comes from.
type Tagged[T any] struct {
	Phase int
	Item  T
}

// Merged is the story of some records once duplicates and superseded
// items are gone, oldest first within each list.
type Merged struct {
	// Sessions are "attempt A, iteration I: summary", one per record with
	// a summary (the role first when not a developer's), tagged with the
	// record's phase; Summaries the same summaries bare, for Level 2,
	// which keeps each phase's latest only, and Reviews what the
	// reviewers said (every review with something to say), for Level 2.
	Sessions        []Tagged[string]
	Summaries       []Tagged[string]
	Reviews         []Tagged[string]
	Requirements    []Tagged[string]
	Dependencies    []Tagged[string]
	Methods         []Tagged[string]
	NotTodos        []Tagged[string]
	Decisions       []Tagged[Decision]
	Todos           []Tagged[string] // open: not closed by a DONE or NOT TODO of the same text
	Other           []Tagged[string] // commands of no known kind
	Recommendations []Tagged[string]
}

// RoleReviewer is the role of a reviewer's record: what a review said,
// which Level 2 keeps beside what each phase said it did.
const RoleReviewer = "reviewer"

// RoleUser is the role of the human's record: the feedback of a plan
// rejected with --feedback, or an answer to recovery's question, as
// requirements later phases keep word for word.
const RoleUser = "user"

// Merge folds records (in sequence order) into one story: exact
// duplicates go (the first stays), a decision is superseded by a later one
// of the same topic (or the same what, when it has no topic), a method by
// a later one of the same name or by a later record that renames it
// ("rename FetchAll to ListItems", "FetchAll → ListItems": every other
// item then says the new name), a requirement by a later one that
// changes its value (SupersedesRequirement: the old one, and any sentence
// that restates it, goes), a TODO by a later DONE or NOT TODO of the
// same text. Requirements, dependencies, methods and NOT TODOs are kept
// verbatim otherwise.
func Merge(rs []Record) Merged {
	rs = slices.Clone(rs)
	Sort(rs)
	var mg merger
	for _, r := range rs {
		mg.add(r)
	}
	return mg.m.current(mg.renames, mg.oldReqs)
}

// merger folds records into a story one at a time (Merge).
type merger struct {
	m       Merged
	renames []rename
	oldReqs [][2]string // a requirement superseded, and the one that superseded it
}

// add folds record r into the story.
func (mg *merger) add(r Record) {
	p := r.Phase
	mg.addSummary(r)
	mg.addRequirements(r)
	for _, v := range r.Dependencies {
		keepFirst(&mg.m.Dependencies, p, v)
	}
	mg.addMethods(r)
	mg.addDecisions(r)
	mg.addCommands(r)
	for _, v := range r.Recommendations {
		keepFirst(&mg.m.Recommendations, p, v)
	}
}

// addSummary records r's summary as a session; a developer's is its
// phase's summary (the latest wins), a reviewer's is a review.
func (mg *merger) addSummary(r Record) {
	p := r.Phase
	s := strings.TrimSpace(r.Summary)
	if s == "" {
		return
	}
	who := ""
	if r.Role != "developer" {
		who = r.Role + ", "
	}
	mg.m.Sessions = append(mg.m.Sessions, Tagged[string]{p, fmt.Sprintf("%sattempt %d, iteration %d: %s", who, r.Attempt, r.Iteration, s)})
	switch r.Role {
	case "developer":
		mg.m.Summaries = slices.DeleteFunc(mg.m.Summaries, func(t Tagged[string]) bool { return t.Phase == p })
		mg.m.Summaries = append(mg.m.Summaries, Tagged[string]{p, s})
	case RoleReviewer:
		mg.m.Reviews = append(mg.m.Reviews, Tagged[string]{p, s})
	}
}

// addRequirements keeps r's requirements, each replacing the earlier ones
// it supersedes (remembered in oldReqs, to drop their restatements).
func (mg *merger) addRequirements(r Record) {
	for _, v := range r.Requirements {
		v = strings.TrimSpace(v)
		for _, t := range mg.m.Requirements {
			if SupersedesRequirement(v, t.Item) {
				mg.oldReqs = append(mg.oldReqs, [2]string{t.Item, v})
			}
		}
		mg.m.Requirements = slices.DeleteFunc(mg.m.Requirements, func(t Tagged[string]) bool { return SupersedesRequirement(v, t.Item) })
		keepFirst(&mg.m.Requirements, r.Phase, v)
	}
}

// addMethods keeps r's methods, each replacing an earlier one of the same
// name, and applies the renames r's summary and decisions tell of (what
// a session did, not what it recommends or leaves to do), unless r lists
// the old name itself.
func (mg *merger) addMethods(r Record) {
	for _, v := range r.Methods {
		replaceByKey(&mg.m.Methods, r.Phase, v, func(s string) string { return norm(methodName(s)) })
	}
	own := map[string]bool{}
	for _, v := range r.Methods {
		own[methodName(v)] = true
	}
	said := r.Summary + "\n"
	for _, d := range r.Decisions {
		said += d.What + "\n" + d.Why + "\n"
	}
	for _, rn := range renamesIn(said, mg.m.Methods) {
		if own[rn.oldFull] {
			continue // the record lists the old name itself: no rename
		}
		mg.m.Methods = slices.DeleteFunc(mg.m.Methods, func(t Tagged[string]) bool { return methodName(t.Item) == rn.oldFull })
		mg.renames = append(mg.renames, rn)
	}
}

// addDecisions keeps r's decisions, each replacing an earlier one of the
// same topic (or the same what, when it has no topic).
func (mg *merger) addDecisions(r Record) {
	for _, d := range r.Decisions {
		if strings.TrimSpace(d.What) == "" {
			continue
		}
		k := decisionKey(d)
		mg.m.Decisions = slices.DeleteFunc(mg.m.Decisions, func(t Tagged[Decision]) bool { return decisionKey(t.Item) == k })
		mg.m.Decisions = append(mg.m.Decisions, Tagged[Decision]{r.Phase, d})
	}
}

// decisionKey is what makes two decisions the same one: their topic, or
// their what when they have none.
func decisionKey(d Decision) string {
	if d.Topic != "" {
		return "t:" + norm(d.Topic)
	}
	return "w:" + norm(d.What)
}

// addCommands sorts r's commands: a TODO is open until a DONE or NOT TODO
// of the same text closes it; a NOT TODO is kept, other commands too.
func (mg *merger) addCommands(r Record) {
	for _, c := range r.Commands {
		kind, text := commandKey(c)
		switch kind {
		case "NOT TODO":
			mg.closeTodo(text)
			keepFirst(&mg.m.NotTodos, r.Phase, c)
		case "DONE":
			mg.closeTodo(text)
		case "TODO":
			keepFirst(&mg.m.Todos, r.Phase, c)
		default:
			keepFirst(&mg.m.Other, r.Phase, c)
		}
	}
}

// closeTodo drops the open TODOs of text.
func (mg *merger) closeTodo(text string) {
	mg.m.Todos = slices.DeleteFunc(mg.m.Todos, func(t Tagged[string]) bool { _, x := commandKey(t.Item); return x == text })
}

// replaceByKey appends v (trimmed, if not empty) of phase p to l in place
// of the items of the same key.
func replaceByKey(l *[]Tagged[string], p int, v string, key func(string) string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	k := key(v)
	*l = slices.DeleteFunc(*l, func(t Tagged[string]) bool { return key(t.Item) == k })
	*l = append(*l, Tagged[string]{p, v})
}

// keepFirst appends v (trimmed) of phase p to l unless it is empty or l
// already holds it (compared by norm): the first stays.
func keepFirst(l *[]Tagged[string], p int, v string) {
	v = strings.TrimSpace(v)
	if v == "" || slices.ContainsFunc(*l, func(t Tagged[string]) bool { return norm(t.Item) == norm(v) }) {
		return
	}
	*l = append(*l, Tagged[string]{p, v})
}

// current returns m as it reads once renames and changed requirements
// are applied: every item but the methods and dependencies says a
// renamed method's new name, and no item restates a requirement that a
// later one replaced (Restates; a summary loses that sentence only).
func (m Merged) current(renames []rename, oldReqs [][2]string) Merged {
	if len(renames) == 0 && len(oldReqs) == 0 {
		return m
	}
	stale := func(s string) bool {
		for _, o := range oldReqs {
			if Restates(s, o[0], o[1]) {
				return true
			}
		}
		return false
	}
	fix := func(s string) string {
		for _, rn := range renames {
			s = rn.apply(s)
		}
		return s
	}
	texts := func(l []Tagged[string], split bool) []Tagged[string] {
		var out []Tagged[string]
		for _, t := range l {
			v := t.Item
			if split {
				var keep []string
				for _, s := range sentencesOf(v) {
					if !stale(s) {
						keep = append(keep, s)
					}
				}
				if len(keep) == 0 {
					continue
				}
				if len(keep) < len(sentencesOf(v)) {
					v = strings.Join(keep, " ")
				}
			} else if stale(v) {
				continue
			}
			out = append(out, Tagged[string]{t.Phase, fix(v)})
		}
		return out
	}
	m.Sessions, m.Summaries, m.Reviews = texts(m.Sessions, true), texts(m.Summaries, true), texts(m.Reviews, true)
	// Requirements and NOT TODOs are live by now, whatever they restate.
	for _, l := range []*[]Tagged[string]{&m.Requirements, &m.NotTodos} {
		*l = slices.Clone(*l)
		for i, t := range *l {
			(*l)[i].Item = fix(t.Item)
		}
	}
	m.Todos, m.Other, m.Recommendations = texts(m.Todos, false), texts(m.Other, false), texts(m.Recommendations, false)
	var ds []Tagged[Decision]
	for _, t := range m.Decisions {
		if stale(t.Item.What) {
			continue
		}
		d := t.Item
		d.What, d.Why = fix(d.What), fix(d.Why)
		if stale(d.Why) {
			d.Why = ""
		}
		ds = append(ds, Tagged[Decision]{t.Phase, d})
	}
	m.Decisions = ds
	return m
}

// filter keeps the items (sessions and summaries too) for which keep and
// keepDecision say so.
func (m Merged) filter(keep func(Tagged[string]) bool, keepDecision func(Tagged[Decision]) bool) Merged {
	f := func(l []Tagged[string]) []Tagged[string] {
		return slices.DeleteFunc(slices.Clone(l), func(t Tagged[string]) bool { return !keep(t) })
	}
	m.Requirements, m.Dependencies, m.Methods = f(m.Requirements), f(m.Dependencies), f(m.Methods)
	m.NotTodos, m.Todos, m.Other, m.Recommendations = f(m.NotTodos), f(m.Todos), f(m.Other), f(m.Recommendations)
	m.Sessions, m.Summaries, m.Reviews = f(m.Sessions), f(m.Summaries), f(m.Reviews)
	m.Decisions = slices.DeleteFunc(slices.Clone(m.Decisions), func(t Tagged[Decision]) bool { return !keepDecision(t) })
	return m
}

// Verbatim lists the items every compression keeps word for word:
// requirements, dependencies, methods and NOT TODOs.
func (m Merged) Verbatim() []string {
	var out []string
	for _, l := range [][]Tagged[string]{m.Requirements, m.Dependencies, m.Methods, m.NotTodos} {
		for _, t := range l {
			out = append(out, t.Item)
		}
	}
	return out
}
