package state

import (
	"regexp"
	"strings"
)

// ParseOption changes how ParsePlan checks a plan.
type ParseOption func(*parseConfig)

type parseConfig struct {
	tdd  bool
	mode ExecMode
}

// WithMode makes a plan run in mode m (RunConfig.Mode, a profile's
// mode:) instead of the mode its lines imply: ExecTask runs every plan one
// task per phase in document order, ExecPhased layers a plain plan's tasks
// by dependency (each depending on the one before, unless it says). The
// empty ExecAuto keeps the plan's own mode.
func WithMode(m ExecMode) ParseOption { return func(c *parseConfig) { c.mode = m } }

// WithoutTDDCheck turns off the rule that every impl task has a test task
// in its dependency chain (RunConfig.SkipTDDCheck, --no-tdd).
func WithoutTDDCheck() ParseOption { return func(c *parseConfig) { c.tdd = false } }

// ParsePlan parses a plan's markdown and checks it. name is the plan's
// file name, used in problem messages only.
//
// The plan is returned even when it has problems, with as much filled in
// as could be read (Phases is nil when the dependencies cannot be
// layered); the error is then a *PlanError listing every problem, each
// with its line: duplicate ids, unknown dependencies, cycles, impl tasks
// with no test task in their dependency chain (when the plan uses types),
// unreadable type or depends-on values, a plan with no tasks, and tasks
// over MaxTaskBytes. A plan over MaxPlanBytes or MaxTasks fails with that
// one problem alone (and, over MaxPlanBytes, the zero Plan).
//
// Markdown is stored with LF line ends and without a byte order mark;
// line numbers count lines of the input as given.
func ParsePlan(name, markdown string, opts ...ParseOption) (Plan, error) {
	cfg := parseConfig{tdd: true}
	for _, o := range opts {
		o(&cfg)
	}
	if ps := planSizeProblem(markdown); ps != nil {
		return Plan{}, &PlanError{File: name, Problems: ps}
	}
	src := normalize(markdown)
	p := parser{lines: strings.Split(src, "\n")}
	p.parse()
	plan := Plan{Markdown: src, Preamble: p.preamble, Tasks: p.tasks, Mode: ModeTask}
	if p.phased {
		plan.Mode = ModePhased
	}
	if len(p.tasks) == 0 && p.preamble != "" {
		// Seeds 000-002: a plan without subtasks is one developer
		// session. The whole plan is its one task's section.
		plan = wholePlan(src, p.lines)
	}
	switch cfg.mode {
	case ExecTask:
		plan.Mode = ModeTask
		p.problems = append(p.problems, laterDependencies(plan.Tasks)...)
	case ExecPhased:
		plan.Mode = ModePhased
	}
	if len(p.tasks) > MaxTasks {
		return plan, &PlanError{File: name, Problems: taskLimitProblems(p.lines, p.tasks)}
	}
	problems := append(p.problems, taskLimitProblems(p.lines, p.tasks)...)
	problems = append(problems, checkPlan(plan, p.meta, cfg.tdd && p.typed)...)
	if len(problems) == 0 {
		phases, err := phasesFor(plan)
		if err == nil {
			plan.Phases = phases
		}
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return plan, &PlanError{File: name, Problems: problems}
	}
	return plan, nil
}

// WholePlanTitle is the title of the one task of a plan without task
// headings.
const WholePlanTitle = "the whole plan"

// wholePlan is the plan of markdown src (lines) that has no task
// headings but says something: one task, "1", whose section is the whole
// plan, in task mode.
func wholePlan(src string, lines []string) Plan {
	first, last := 0, len(lines)-1
	for first < last && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	for last > first && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	t := Task{ID: "1", Title: WholePlanTitle, Line: first + 1, EndLine: last + 1, Description: trimBlank(lines)}
	return Plan{Markdown: src, Mode: ModeTask, Whole: true, Tasks: []Task{t}}
}

// laterDependencies are the problems of tasks run in document order
// (ExecTask) that depend on a task after them.
func laterDependencies(tasks []Task) []Problem {
	at := make(map[string]int, len(tasks))
	for i, t := range tasks {
		if _, dup := at[t.ID]; !dup {
			at[t.ID] = i
		}
	}
	var ps []Problem
	for i, t := range tasks {
		for _, d := range t.DependsOn {
			if j, ok := at[d]; ok && j > i {
				ps = append(ps, newProblem(t.Line, []string{t.ID, d},
					"task %s depends on task %s, which comes after it: mode task runs the tasks in the plan's order (move task %s up, or use mode phased)", t.ID, d, d))
			}
		}
	}
	return ps
}

// normalize strips a byte order mark and turns CRLF and CR line ends into LF.
func normalize(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// taskMeta is what the parser knows about a task beyond the Task itself.
type taskMeta struct {
	dependsLine int // line of the depends-on line; 0 when there is none
}

type parser struct {
	lines    []string
	preamble string
	tasks    []Task
	meta     []taskMeta
	problems []Problem
	phased   bool // some task has a type or depends-on line
	typed    bool // some task has a type line
}

var (
	headingRe = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	// taskRe reads a heading's text, with emphasis and code marks removed:
	// "Task 2a: Title", "Task 3.1 — Title", "Task 4 - Title", "Task 5. Title".
	taskRe  = regexp.MustCompile(`(?i)^task\s+#?([0-9](?:[0-9a-z]|\.[0-9a-z])*)(?:\s*[:—–\-.)]\s*|\s+|$)(.*)$`)
	fenceRe = regexp.MustCompile("^ {0,3}(```|~~~)")
	// metaRe reads a bullet line such as "- type: impl",
	// "- **Depends on:** 1a" or "**Files**: a.go".
	metaRe = regexp.MustCompile(`(?i)^\s*(?:[-*+]\s+)?(?:\*\*|__)?\s*(type|kind|depends[ _-]on|dependencies|depends|deps|files?|files touched)\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*?)\s*$`)
	itemRe = regexp.MustCompile(`^\s*[-*+]\s+(.*?)\s*$`)
	// parenRe matches a parenthesised remark: "calc.go (new)".
	parenRe = regexp.MustCompile(`\([^)]*\)`)
)

// taskHeading returns the id and title of a task heading line.
func taskHeading(line string) (id, title string, ok bool) {
	m := headingRe.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	text := strings.NewReplacer("**", "", "__", "", "`", "").Replace(m[1])
	t := taskRe.FindStringSubmatch(strings.TrimSpace(text))
	if t == nil {
		return "", "", false
	}
	return strings.ToLower(t[1]), strings.TrimSpace(t[2]), true
}

func (p *parser) parse() {
	var heads []int // indexes of task heading lines
	fenced := ""
	for i, l := range p.lines {
		if m := fenceRe.FindStringSubmatch(l); m != nil {
			switch fenced {
			case "":
				fenced = m[1]
			case m[1]:
				fenced = ""
			}
			continue
		}
		if fenced != "" {
			continue
		}
		if _, _, ok := taskHeading(l); ok {
			heads = append(heads, i)
		}
	}
	end := len(p.lines)
	if len(heads) > 0 {
		end = heads[0]
	}
	p.preamble = trimBlank(p.lines[:end])
	for k, h := range heads {
		next := len(p.lines)
		if k+1 < len(heads) {
			next = heads[k+1]
		}
		p.task(h, next)
	}
}

// task reads the task whose heading is line index h and whose section
// runs up to (not including) line index next.
func (p *parser) task(h, next int) {
	id, title, _ := taskHeading(p.lines[h])
	t := Task{ID: id, Title: title, Line: h + 1, EndLine: h + 1}
	for e := next - 1; e > h; e-- {
		if strings.TrimSpace(p.lines[e]) != "" {
			t.EndLine = e + 1
			break
		}
	}
	var meta taskMeta
	hasType, hasDeps, explicitDeps := false, false, false
	i := h + 1
	for ; i < next; i++ {
		l := p.lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		m := metaRe.FindStringSubmatch(l)
		if m == nil {
			break
		}
		key, val, line := strings.ToLower(m[1]), cleanValue(m[2]), i+1
		// A key with no value may be followed by a bulleted list.
		if val == "" {
			var items []string
			for i+1 < next && !metaRe.MatchString(p.lines[i+1]) {
				it := itemRe.FindStringSubmatch(p.lines[i+1])
				if it == nil {
					break
				}
				items = append(items, cleanValue(it[1]))
				i++
			}
			val = strings.Join(items, ", ")
		}
		switch {
		case key == "type" || key == "kind":
			if hasType {
				p.problem(line, []string{id}, "task %s has a second type line", id)
			}
			hasType = true
			typ, ok := parseType(val)
			if !ok {
				p.problem(line, []string{id}, "task %s: unknown type %q (want test, impl or refactor)", id, val)
			}
			t.Type = typ
		case strings.HasPrefix(key, "file"):
			t.Files = append(t.Files, splitFiles(val)...)
		default:
			if hasDeps {
				p.problem(line, []string{id}, "task %s has a second depends-on line", id)
			}
			hasDeps, explicitDeps = true, true
			meta.dependsLine = line
			deps, bad := parseDeps(val)
			for _, b := range bad {
				p.problem(line, []string{id}, "task %s: cannot read %q as a task id in depends on", id, b)
			}
			t.DependsOn = deps
		}
	}
	if hasType {
		p.phased, p.typed = true, true
	}
	if hasDeps {
		p.phased = true
	}
	if !explicitDeps && len(p.tasks) > 0 {
		t.DependsOn = []string{p.tasks[len(p.tasks)-1].ID}
	}
	t.Description = trimBlank(p.lines[i:next])
	p.tasks = append(p.tasks, t)
	p.meta = append(p.meta, meta)
}

func (p *parser) problem(line int, ids []string, format string, args ...any) {
	p.problems = append(p.problems, newProblem(line, ids, format, args...))
}

// trimBlank joins lines with trailing spaces removed and blank lines at
// both ends dropped.
func trimBlank(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(out, "\n"), "\n")
}

// cleanValue removes emphasis and code marks and surrounding space.
func cleanValue(s string) string {
	s = strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
	return strings.TrimSpace(s)
}

// parseType reads a type value: "test", "impl", "refactor", some common
// variants ("tests", "implementation") and "none".
func parseType(v string) (TaskType, bool) {
	v = strings.ToLower(strings.Trim(parenRe.ReplaceAllString(v, ""), " .*_"))
	if f := strings.Fields(v); len(f) > 0 {
		v = f[0]
	}
	switch strings.Trim(v, ".,;") {
	case "test", "tests", "testing":
		return TypeTest, true
	case "impl", "implementation", "implement", "feature":
		return TypeImpl, true
	case "refactor", "refactoring", "cleanup":
		return TypeRefactor, true
	case "none", "", "-":
		return TypeNone, true
	}
	return TypeNone, false
}

// parseDeps reads a depends-on value: "none", "1a, 1b", "1a and 1b",
// "Task 2a; Task 2b", "#3". It returns the ids and any words it could not
// read as ids.
func parseDeps(v string) (ids, bad []string) {
	v = strings.ToLower(parenRe.ReplaceAllString(v, " "))
	switch strings.Trim(v, " .*_") {
	case "", "none", "nothing", "n/a", "na", "-", "—", "–", "[]":
		return nil, nil
	}
	f := strings.FieldsFunc(v, func(r rune) bool {
		return r == ',' || r == ';' || r == '&' || r == '/' || r == ' ' || r == '\t' || r == '[' || r == ']'
	})
	for _, w := range f {
		w = strings.Trim(w, `.:#"'*`)
		switch w {
		case "", "and", "task", "tasks", "on", "&", "+":
			continue
		}
		if !idRe.MatchString(w) {
			bad = append(bad, w)
			continue
		}
		ids = append(ids, w)
	}
	return ids, bad
}

var idRe = regexp.MustCompile(`^[0-9](?:[0-9a-z]|\.[0-9a-z])*$`)

// splitFiles reads a files value: paths separated by commas or spaces,
// with remarks in parentheses dropped.
func splitFiles(v string) []string {
	v = parenRe.ReplaceAllString(v, " ")
	var files []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' }) {
		f = strings.Trim(f, "\"'*`")
		switch strings.ToLower(f) {
		case "", "-", "and", "&", "+":
			continue // "a.go and b.go" lists two files
		}
		files = append(files, f)
	}
	return files
}
