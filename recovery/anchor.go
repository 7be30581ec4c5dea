package recovery

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// AnchorTask is one task of a phase as the human approved it.
type AnchorTask struct {
	ID    string         `json:"id"`
	Title string         `json:"title"`
	Type  state.TaskType `json:"type,omitempty"`
	Files []string       `json:"files,omitempty"`
	Body  string         `json:"body,omitempty"`
}

// Anchor is a phase's goal, frozen when the plan is approved: its tasks
// and a hash of them. A replan may change how the phase reaches it, never
// what it is.
type Anchor struct {
	Phase int          `json:"phase"`
	Tasks []AnchorTask `json:"tasks"`
	Hash  string       `json:"hash"` // hex SHA-256 of the tasks' JSON
}

func (a Anchor) clone() Anchor {
	c := a
	c.Tasks = make([]AnchorTask, len(a.Tasks))
	for i, t := range a.Tasks {
		t.Files = slices.Clone(t.Files)
		c.Tasks[i] = t
	}
	return c
}

// FreezeAnchor returns the anchor of phase index of plan: its tasks in
// run order, with their ids, titles, types, files and bodies, and their
// hash. It fails with state.ErrNoPhase for a phase outside the plan and
// ErrNoTask for a task id the plan does not have.
func FreezeAnchor(plan state.Plan, index int) (Anchor, error) {
	if index < 0 || index >= len(plan.Phases) {
		return Anchor{}, fmt.Errorf("recovery: anchor of phase %d: %w", index+1, state.ErrNoPhase)
	}
	a := Anchor{Phase: index}
	for _, id := range plan.Phases[index].TaskIDs {
		i := slices.IndexFunc(plan.Tasks, func(t state.Task) bool { return t.ID == id })
		if i < 0 {
			return Anchor{}, fmt.Errorf("%w: task %s of phase %d", ErrNoTask, id, index+1)
		}
		t := plan.Tasks[i]
		a.Tasks = append(a.Tasks, AnchorTask{ID: t.ID, Title: t.Title, Type: t.Type, Files: slices.Clone(t.Files), Body: t.Description})
	}
	a.Hash = anchorHash(a.Tasks)
	return a, nil
}

func anchorHash(tasks []AnchorTask) string {
	b, err := json.Marshal(tasks)
	if err != nil { // only an invalid TaskType can fail; hash its name instead
		b = fmt.Appendf(nil, "%#v", tasks)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Verify returns nil when the anchor's tasks still hash to its Hash, and
// an error matching ErrAnchorTampered otherwise.
func (a Anchor) Verify() error {
	if got := anchorHash(a.Tasks); got != a.Hash {
		return fmt.Errorf("%w: phase %d: hash %s, tasks hash to %s", ErrAnchorTampered, a.Phase+1, a.Hash, got)
	}
	return nil
}

// Text renders the anchor for the replanner's prompt, the same bytes
// every time: one "### Task <id>: <title>" section per task, as in the
// plan, with its type and files lines and its body.
func (a Anchor) Text() string {
	var b strings.Builder
	for i, t := range a.Tasks {
		if i > 0 {
			b.WriteString("\n")
		}
		writeTaskHead(&b, t.ID, t.Title, t.Type, t.Files)
		if t.Body != "" {
			b.WriteString("\n" + strings.TrimRight(t.Body, "\n") + "\n")
		}
	}
	return b.String()
}

// writeTaskHead writes a task's heading as the replanner and the second
// opinion read it: "### Task <id>: <title>", then its type and its files
// lines when it has them.
func writeTaskHead(b *strings.Builder, id, title string, typ state.TaskType, files []string) {
	fmt.Fprintf(b, "### Task %s: %s\n", id, title)
	if typ != state.TypeNone {
		fmt.Fprintf(b, "- type: %s\n", typ)
	}
	if len(files) > 0 {
		fmt.Fprintf(b, "- files: %s\n", strings.Join(files, ", "))
	}
}

// narrowingTerms are the words that, added by a revision, say it does less
// than the anchor in any sentence: each is matched as a whole word,
// case-insensitively. Words that narrow only in some sentences ("skip",
// "only", "mock") are judged by the sentence (narrowedBy).
var narrowingTerms = []struct {
	name string
	re   func() *regexp.Regexp
}{
	{"stub", lazyRegexp(`(?i)\bstub(?:s|bed|bing)?\b`)},
	{"placeholder", lazyRegexp(`(?i)\bplace-?holders?\b`)},
	{"TODO", lazyRegexp(`(?i)\b(?:todo|fixme|tbd)\b`)},
	{"hardcode", lazyRegexp(`(?i)\bhard-?cod(?:e|ed|es|ing)\b`)},
	{"not implemented", lazyRegexp(`(?i)\bnot (?:yet )?implemented\b|\bunimplemented\b`)},
	{"xfail", lazyRegexp(`(?i)\bxfail\b`)},
}

// CheckRevision compares a revised approach of the anchor's phase with the
// anchor and returns the ways it narrows the phase's goal, nil when it
// does not. A revision may restructure the phase — split a task in two,
// merge tasks, reorder them, give them new ids — as long as it still
// delivers everything the anchor requires; it is refused only for what
// it drops or puts off:
//
//   - every anchored file is still in some revised task's files, and an
//     anchored test task's files are in a revised test task's; a phase
//     with test tasks keeps at least one (the TDD rule); a task that keeps
//     its id and was a test task is one still, and an anchored task with
//     a type keeps one; in a typed plan every new task has a type;
//   - every name, file, command and acceptance criterion the anchored
//     tasks name (RequiredOf) is promised by the revised tasks: a
//     sentence of a revised task names it and does not put it off
//     (Defers). Naming it only in the approach, or only to put it off,
//     does not deliver it, whatever the prose says;
//   - no sentence of the revision (its tasks or its approach) puts off or
//     weakens a required item or the tests ("Add applies; subtraction is
//     deferred", "Sub lands in the next milestone", "skip the bad-input
//     cases"), while "skip the slow rebuild" alone is fine;
//   - neither the tasks nor the approach use a word that always narrows
//     ("stub", "placeholder", "TODO", "not implemented", "hardcode",
//     "xfail") more often than the anchored text did.
//
// A revision that narrows goes to a human, not to the developer. The
// phase's diff is judged apart (CheckTestChanges).
func CheckRevision(a Anchor, revised []state.Task, approach string) []string {
	rev := indexRevision(revised)
	reasons := rev.duplicates
	kept, testLost := checkKeptTasks(a, rev)
	reasons = append(reasons, kept...)
	reasons = append(reasons, checkTestTasksKept(a, rev, reasons, testLost)...)
	reasons = append(reasons, untypedNewTasks(a, revised)...)
	anchorText := anchorTextOf(a)
	reasons = append(reasons, addedTerms("the revised tasks", anchorText, rev.text)...)
	reasons = append(reasons, addedTerms("the approach", anchorText, approach)...)
	reasons = append(reasons, undelivered(a, rev, anchorText, approach, testLost)...)
	for _, n := range narrowedBy(rev.text+approach+"\n", anchorText, RequiredOf(a)) {
		reasons = append(reasons, "the revision narrows: "+n)
	}
	return reasons
}

// revision is what CheckRevision compares of the revised tasks: each by
// id, their files (all, and the test tasks'), their text and its
// sentences (all, the test tasks', the others').
type revision struct {
	byID       map[string]state.Task
	duplicates []string // "task X appears twice", in order
	files      map[string]bool
	testFiles  map[string]bool
	tests      int // how many test tasks
	text       string
	sentences  []string
	testSents  []string
	otherSents []string
}

// indexRevision reads the revised tasks into a revision.
func indexRevision(revised []state.Task) revision {
	rev := revision{byID: map[string]state.Task{}, files: map[string]bool{}, testFiles: map[string]bool{}}
	for _, t := range revised {
		if _, dup := rev.byID[t.ID]; dup {
			rev.duplicates = append(rev.duplicates, fmt.Sprintf("task %s appears twice", t.ID))
		}
		rev.byID[t.ID] = t
	}
	var text strings.Builder
	for _, t := range revised {
		isTest := t.Type == state.TypeTest
		for _, f := range t.Files {
			rev.files[cleanFile(f)] = true
			if isTest {
				rev.testFiles[cleanFile(f)] = true
			}
		}
		tt := t.Title + ".\n" + t.Description + "\n" + strings.Join(t.Files, "\n") + "\n"
		text.WriteString(tt)
		rev.sentences = append(rev.sentences, sentences(tt)...)
		if isTest {
			rev.tests++
			rev.testSents = append(rev.testSents, sentences(tt)...)
		} else {
			rev.otherSents = append(rev.otherSents, sentences(tt)...)
		}
	}
	rev.text = text.String()
	return rev
}

// anchorTextOf is the anchored tasks' titles and bodies, the text the
// revision's words are compared with.
func anchorTextOf(a Anchor) string {
	var b strings.Builder
	for _, at := range a.Tasks {
		b.WriteString(at.Title + "\n" + at.Body + "\n")
	}
	return b.String()
}

// checkKeptTasks judges each anchored task against the revision: one that
// kept its id keeps its test type and its type, and every anchored file
// (an anchored test task's in a revised test task) is still in the
// revision. It returns the reasons and the ids of the test tasks lost.
func checkKeptTasks(a Anchor, rev revision) (reasons []string, testLost map[string]bool) {
	testLost = map[string]bool{}
	for _, at := range a.Tasks {
		notTest := false
		if rt, ok := rev.byID[at.ID]; ok { // kept its id; one split, merged or renumbered is judged by what it requires
			switch {
			case at.Type == state.TypeTest && rt.Type != state.TypeTest:
				notTest, testLost[at.ID] = true, true
				reasons = append(reasons, fmt.Sprintf("task %s is no longer a test task (now %s): the TDD rule requires its tests", at.ID, rt.Type))
			case at.Type != state.TypeNone && rt.Type == state.TypeNone:
				reasons = append(reasons, fmt.Sprintf("task %s lost its type %s", at.ID, at.Type))
			}
		}
		for _, f := range at.Files {
			switch {
			case !rev.files[cleanFile(f)]:
				reasons = append(reasons, fmt.Sprintf("task %s: file %s is dropped", at.ID, f))
			case at.Type == state.TypeTest && !rev.testFiles[cleanFile(f)] && !notTest:
				testLost[at.ID] = true
				reasons = append(reasons, fmt.Sprintf("task %s: test file %s is in no revised test task: the TDD rule requires its tests", at.ID, f))
			}
		}
	}
	return reasons, testLost
}

// checkTestTasksKept applies the TDD rule to the phase as a whole: an
// anchor with test tasks needs a revision with one. Unless an earlier
// reason already cites the rule it says so, and it marks every anchored
// test task lost in testLost.
func checkTestTasksKept(a Anchor, rev revision, earlier []string, testLost map[string]bool) []string {
	anchorTests := 0
	for _, at := range a.Tasks {
		if at.Type == state.TypeTest {
			anchorTests++
		}
	}
	if anchorTests == 0 || rev.tests > 0 {
		return nil
	}
	for _, at := range a.Tasks {
		if at.Type == state.TypeTest {
			testLost[at.ID] = true
		}
	}
	if slices.ContainsFunc(earlier, func(r string) bool { return strings.Contains(r, "TDD rule") }) {
		return nil
	}
	return []string{fmt.Sprintf("the revision has no test task, the anchor %d: the TDD rule requires its tests", anchorTests)}
}

// untypedNewTasks names the new tasks without a type in a plan whose
// anchored tasks have types.
func untypedNewTasks(a Anchor, revised []state.Task) []string {
	anchored, typed := map[string]bool{}, false
	for _, at := range a.Tasks {
		anchored[at.ID] = true
		typed = typed || at.Type != state.TypeNone
	}
	var reasons []string
	for _, t := range revised {
		if !anchored[t.ID] && typed && t.Type == state.TypeNone {
			reasons = append(reasons, fmt.Sprintf("task %s (%s) has no type, in a plan whose tasks have types", t.ID, t.Title))
		}
	}
	return reasons
}

// undelivered names each item the anchored tasks require (RequiredOf) that
// no sentence of a revised task promises, once per item. A name or
// criterion of a test task must be promised by a test task, one of an
// impl (or other typed) task by a task that is not a test task; one named
// only where it is put off is left to narrowedBy, and one of a test task
// in testLost to the reason that lost it.
func undelivered(a Anchor, rev revision, anchorText, approach string, testLost map[string]bool) []string {
	all := rev.text + approach + "\n"
	anchorNorm := normSpace(anchorText)
	types := map[string]state.TaskType{}
	for _, at := range a.Tasks {
		types[at.ID] = at.Type
	}
	var reasons []string
	reported := map[string]bool{}
	for _, r := range required(a, true) {
		key := r.Kind + "\x00" + r.Text
		if reported[key] || r.Kind == "file" && rev.files[r.Text] {
			continue
		}
		own, kind := rev.ownSentences(r, types[r.Task])
		var why string
		switch {
		case promised(own, anchorNorm, r):
		case kind != "" && promised(rev.sentences, anchorNorm, r):
			if testLost[r.Task] {
				break // the lost test task is the reason already
			}
			why = fmt.Sprintf("the %s %s that task %s names is promised by no revised %s task", kindName(r.Kind), r.Text, r.Task, kind)
		case mentions(rev.text, r):
			// Named only where it is put off: narrowedBy says so.
		case mentions(all, r) || r.Kind == "file" && mentions(all, Required{Kind: "file", Text: path.Base(r.Text)}):
			why = fmt.Sprintf("the %s %s that task %s names is no longer required by the revised tasks: only the approach names it", kindName(r.Kind), r.Text, r.Task)
		default:
			why = fmt.Sprintf("the %s %s that task %s names is no longer required", kindName(r.Kind), r.Text, r.Task)
		}
		if why != "" {
			reported[key] = true
			reasons = append(reasons, why)
		}
	}
	return reasons
}

// ownSentences returns the revised sentences that must promise r, whose
// anchored task has type t, and the kind of task they come from ("test",
// "non-test", or "" for all tasks). A name or criterion a test task
// names is delivered by a test task, one an impl (or other typed) task
// names by a task that is not a test task: a split keeps the work where
// it was.
func (rev revision) ownSentences(r Required, t state.TaskType) (own []string, kind string) {
	if r.Kind != "name" && r.Kind != "criterion" {
		return rev.sentences, ""
	}
	switch t {
	case state.TypeNone:
		return rev.sentences, ""
	case state.TypeTest:
		return rev.testSents, "test"
	default:
		return rev.otherSents, "non-test"
	}
}

// addedTerms names the narrowing terms that after uses more often than
// before.
func addedTerms(where, before, after string) []string {
	var out []string
	for _, term := range narrowingTerms {
		nb, na := len(term.re().FindAllStringIndex(before, -1)), len(term.re().FindAllStringIndex(after, -1))
		if na > nb {
			out = append(out, fmt.Sprintf("%s add the narrowing word %q", where, term.name))
		}
	}
	return out
}

func kindName(k string) string {
	if k == "criterion" {
		return "acceptance criterion"
	}
	return k
}

func cleanFile(f string) string {
	return strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(f), `\`, "/"), "./")
}

// WithAnchor returns m with a as the goal anchor of phase index. The
// workflow freezes each phase's anchor once, when the plan is approved; a
// replan checks against it and never replaces it.
func WithAnchor(m Memory, index int, a Anchor) Memory {
	p := m.Phase(index)
	c := a.clone()
	p.Anchor = &c
	return m.withPhase(p)
}

// Constraint renders the hard constraint that a replan prompt carries:
// the anchor's text verbatim, with its hash, and the rule that a revision
// changes how the phase reaches its goal, never what the goal is.
func (a Anchor) Constraint() string {
	var b strings.Builder
	b.WriteString("## Hard constraint: the goal of this phase is fixed\n\n")
	fmt.Fprintf(&b, "These are the tasks of phase %d as the human approved them (anchor %s).\n", a.Phase+1, a.Hash[:min(12, len(a.Hash))])
	b.WriteString("Your revision may split, merge or reorder these tasks, but every function, file and test they\n")
	b.WriteString("require must stay in a revised task of the same kind (tests in test tasks), each task typed.\n")
	b.WriteString("Change HOW the phase achieves them, never WHAT it achieves: do not reduce scope, stub,\n")
	b.WriteString("skip, mock, leave placeholders or TODOs, or narrow a task to a part of it.\n")
	b.WriteString("Keep naming every function, file, command and test case the tasks name: a revision\n")
	b.WriteString("that no longer names one, or puts one off (\"deferred\", \"later\", \"skip\"), is refused.\n\n")
	b.WriteString("<goal-anchor>\n")
	b.WriteString(a.Text())
	b.WriteString("</goal-anchor>\n")
	return b.String()
}
