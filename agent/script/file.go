package script

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/internal/inputfile"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

// Script is what the script driver plays back: per role, a list of entries
// saying what a session does and answers. Load reads one from a file
// (the format is in SCRIPT-FORMAT.md); tests may build one in Go.
type Script struct {
	// Architect answers by plan revision: entry i is revision i, and the last
	// entry answers every later revision.
	Architect []ArchitectStep `yaml:"architect"`
	// Developer, Reviewer and Evaluator entries are chosen by Match: see
	// (*Script).Has and Driver.Run.
	Developer []DeveloperStep `yaml:"developer"`
	Reviewer  []ReviewerStep  `yaml:"reviewer"`
	Evaluator []EvaluatorStep `yaml:"evaluator"`
	// Summarizer entries answer the optional summarizer role, by Match.
	Summarizer []SummarizerStep `yaml:"summarizer"`
	// Doctor and Replanner entries answer recovery's calls, by Match (and
	// for the Doctor by tier).
	Doctor    []DoctorStep    `yaml:"doctor"`
	Replanner []ReplannerStep `yaml:"replanner"`
	// Dir is the directory relative plan_file and content_file paths are
	// read from; Load sets it to the script file's directory, "" is
	// the current directory.
	Dir string `yaml:"-"`

	name string // the file, for errors
}

// Match selects the sessions an entry applies to. A zero field matches any
// value; the others must equal the session's.
type Match struct {
	Phase     int `yaml:"phase,omitempty"`
	Attempt   int `yaml:"attempt,omitempty"`
	Iteration int `yaml:"iteration,omitempty"`
	// Task matches a developer session whose lane holds this task of the
	// plan (agent.Session.Tasks): each lane of a phase its own entry.
	Task string `yaml:"task,omitempty"`
	// Model matches the model the workflow gave the session: a phase's
	// escalation model (roles.developer.escalation_model) once recovery
	// escalated it, the Doctor's model or strong_model. A session run
	// with its role's model has none unless the profile names one.
	Model string `yaml:"model,omitempty"`
}

// score reports whether m matches s and how many fields it specifies.
func (m Match) score(s agent.Session) (int, bool) {
	n := 0
	if m.Model != "" {
		if m.Model != s.Model {
			return 0, false
		}
		n++
	}
	if m.Task != "" {
		if !slices.Contains(s.Tasks, m.Task) {
			return 0, false
		}
		n++
	}
	for _, c := range [...]struct{ want, got int }{{m.Phase, s.Phase}, {m.Attempt, s.Attempt}, {m.Iteration, s.Iteration}} {
		if c.want == 0 {
			continue
		}
		if c.want != c.got {
			return 0, false
		}
		n++
	}
	return n, true
}

// String returns "phase 2, attempt 1" or "any session".
func (m Match) String() string {
	var parts []string
	for _, c := range [...]struct {
		name string
		v    int
	}{{"phase", m.Phase}, {"attempt", m.Attempt}, {"iteration", m.Iteration}} {
		if c.v != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.name, c.v))
		}
	}
	if m.Task != "" {
		parts = append(parts, "task "+m.Task)
	}
	if m.Model != "" {
		parts = append(parts, "model "+m.Model)
	}
	if len(parts) == 0 {
		return "any session"
	}
	return strings.Join(parts, ", ")
}

// ArchitectStep is one plan the architect returns.
type ArchitectStep struct {
	Plan     string      `yaml:"plan"`      // the plan markdown
	PlanFile string      `yaml:"plan_file"` // or a file holding it, relative to Script.Dir
	Summary  string      `yaml:"summary"`
	Error    string      `yaml:"error"` // set: the architect fails with this error instead
	Usage    state.Usage `yaml:"usage"`

	line int
}

// DeveloperStep is what one developer session does.
type DeveloperStep struct {
	Match   `yaml:",inline"`
	Actions []Action     `yaml:"actions"`
	Result  agent.Status `yaml:"result"` // "" (completed unless Error is set), completed or failed
	Error   string       `yaml:"error"`  // the failure's text; implies result: failed
	// DriverError, set, makes the session not run at all: Run returns
	// an error wrapping ErrModel with this text, as a model endpoint
	// that answers 503 would (recovery classifies it as infra).
	DriverError string      `yaml:"driver_error"`
	Summary     string      `yaml:"summary"`
	Usage       state.Usage `yaml:"usage"`
	// The structured report for the Task Story: decisions, commands,
	// methods, dependencies, requirements, recommendations.
	story.Facts `yaml:",inline"`

	line int
}

// ReviewerStep is one review.
type ReviewerStep struct {
	Match `yaml:",inline"`
	// SecondOpinion makes the entry answer recovery's question about a
	// replan's revision ("does it still deliver the goal?", a session with
	// Revision set) instead of a phase's review: approved is the yes or
	// no, comments the reason. Entries without it answer reviews only.
	SecondOpinion bool               `yaml:"second_opinion"`
	Approved      bool               `yaml:"approved" script:"required"`
	Comments      string             `yaml:"comments"`
	Items         []agent.ReviewItem `yaml:"items"`
	// Tasks names the tasks a rejection is about (agent.Review.Tasks).
	Tasks []string    `yaml:"tasks"`
	Usage state.Usage `yaml:"usage"`

	line int
}

// EvaluatorStep is one evaluation of review items.
type EvaluatorStep struct {
	Match `yaml:",inline"`
	Items []agent.ReviewItem `yaml:"items" script:"required"`
	Usage state.Usage        `yaml:"usage"`

	line int
}

// Action is one thing a developer session does to the repository. Exactly
// one of Write, Edit, Delete, Mkdir and Run is set.
type Action struct {
	Write  *WriteAction `yaml:"write"`
	Edit   *EditAction  `yaml:"edit"`
	Delete string       `yaml:"delete"` // a file or directory
	Mkdir  string       `yaml:"mkdir"`
	Run    string       `yaml:"run"` // a shell command
	// Wait pauses the session for this duration ("2s", "500ms"), as a
	// session waits on its model (a benchmark's lanes, a test that kills
	// a session midway).
	Wait         string `yaml:"wait"`
	AllowFailure bool   `yaml:"allow_failure"` // with Run: a failing command does not fail the session
	// ExpandContext reads the Task Story's records of this earlier phase
	// (1-based), as the llm driver's expand_context tool does: the escape
	// hatch, counted in the report's Expansions.
	ExpandContext int `yaml:"expand_context"`

	line int
}

// WriteAction creates or replaces a file.
type WriteAction struct {
	Path        string `yaml:"path" script:"required"`
	Content     string `yaml:"content" script:"required,unless=content_file"`
	ContentFile string `yaml:"content_file"` // or the content comes from this file, relative to Script.Dir
}

// EditAction replaces the one occurrence of Old in a file with New.
type EditAction struct {
	Path string `yaml:"path" script:"required"`
	Old  string `yaml:"old" script:"required"`
	New  string `yaml:"new" script:"required"`
}

// kind returns the action's kind, its argument, and the tool it needs; ""
// when not exactly one kind is set.
func (a Action) kind() (kind, arg, tool string) {
	n := 0
	if a.Write != nil {
		n, kind, arg, tool = n+1, "write", a.Write.Path, agent.ToolWrite
	}
	if a.Edit != nil {
		n, kind, arg, tool = n+1, "edit", a.Edit.Path, agent.ToolEdit
	}
	if a.Delete != "" {
		n, kind, arg, tool = n+1, "delete", a.Delete, agent.ToolDelete
	}
	if a.Mkdir != "" {
		n, kind, arg, tool = n+1, "mkdir", a.Mkdir, agent.ToolWrite
	}
	if a.Run != "" {
		n, kind, arg, tool = n+1, "run", a.Run, agent.ToolRun
	}
	if a.ExpandContext != 0 {
		n, kind, arg, tool = n+1, "expand_context", strconv.Itoa(a.ExpandContext), agent.ToolRead
	}
	if a.Wait != "" {
		n, kind, arg, tool = n+1, "wait", a.Wait, ""
	}
	if n != 1 {
		return "", "", ""
	}
	return kind, arg, tool
}

// UnmarshalYAML records the entry's line.
func (s *ArchitectStep) UnmarshalYAML(n *yaml.Node) error {
	type plain ArchitectStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// UnmarshalYAML records the entry's line.
func (s *DeveloperStep) UnmarshalYAML(n *yaml.Node) error {
	type plain DeveloperStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// UnmarshalYAML records the entry's line.
func (s *ReviewerStep) UnmarshalYAML(n *yaml.Node) error {
	type plain ReviewerStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// UnmarshalYAML records the entry's line.
func (s *EvaluatorStep) UnmarshalYAML(n *yaml.Node) error {
	type plain EvaluatorStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// SummarizerStep is one summarizer session's answer: the story so far.
type SummarizerStep struct {
	Match `yaml:",inline"`
	Text  string      `yaml:"text" script:"required,unless=error"`
	Error string      `yaml:"error"` // set: the summarizer fails with this error instead
	Usage state.Usage `yaml:"usage"`

	line int
}

// UnmarshalYAML records the entry's line.
func (s *SummarizerStep) UnmarshalYAML(n *yaml.Node) error {
	type plain SummarizerStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// DoctorStep is one Doctor answer. Attempt matches the failed attempt the
// Doctor is asked about; Tier, when given, the Doctor's tier.
type DoctorStep struct {
	Match  `yaml:",inline"`
	Tier   string      `yaml:"tier"`                                  // cheap or strong; "" matches both
	Answer string      `yaml:"answer" script:"required,unless=error"` // the final text, as the model would give it (JSON, or not)
	Error  string      `yaml:"error"`                                 // set: the session fails with this error instead
	Usage  state.Usage `yaml:"usage"`

	line int
}

// UnmarshalYAML records the entry's line.
func (s *DoctorStep) UnmarshalYAML(n *yaml.Node) error {
	type plain DoctorStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// ReplannerStep is one replanner answer: the revised approach as the
// model would give it.
type ReplannerStep struct {
	Match  `yaml:",inline"`
	Answer string      `yaml:"answer" script:"required,unless=error"`
	Error  string      `yaml:"error"`
	Usage  state.Usage `yaml:"usage"`

	line int
}

// UnmarshalYAML records the entry's line.
func (s *ReplannerStep) UnmarshalYAML(n *yaml.Node) error {
	type plain ReplannerStep
	s.line = n.Line
	return n.Decode((*plain)(s))
}

// UnmarshalYAML records the action's line.
func (a *Action) UnmarshalYAML(n *yaml.Node) error {
	type plain Action
	a.line = n.Line
	return n.Decode((*plain)(a))
}

// MaxFileBytes is the largest script, and the largest file a script
// names (plan_file, content_file), that is read: 16 MiB.
const MaxFileBytes = 16 << 20

// Load reads a script file, YAML or JSON: by the extension (.yaml,
// .yml, .json), or else JSON when the first non-blank character is '{'.
// Loading is strict: an unknown key, a value of the wrong type, a repeated
// key, a missing required key or a bad value is an error of the form
// "script FILE: line N: ..." that matches ErrInvalid. Files named by
// plan_file and content_file are resolved against the script's directory
// and must exist.
func Load(path string) (*Script, error) {
	data, err := inputfile.Read(path, MaxFileBytes, inputfile.Options{Pipes: true})
	if err != nil {
		return nil, fmt.Errorf("agent: load script: %w", err)
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	s.Dir = filepath.Dir(path)
	if err := s.checkFiles(); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse reads a script from data as Load does; name is used for
// the format (by extension) and in errors. The result's Dir is "", and the
// files named by plan_file and content_file are not checked.
func Parse(name string, data []byte) (*Script, error) {
	fail := func(line int, err error) (*Script, error) {
		return nil, &Error{File: name, Line: line, Err: err}
	}
	var root *yaml.Node
	if isJSON(name, data) {
		n, err := jsonToNode(data)
		if err != nil {
			var le *lineError
			if errors.As(err, &le) {
				return fail(le.line, le.err)
			}
			return fail(0, err)
		}
		root = n
	} else {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fail(0, errors.New(strings.TrimPrefix(err.Error(), "yaml: ")))
		}
		root = &doc
	}
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return fail(0, errors.New("the script is empty"))
		}
		root = root.Content[0]
	}
	if root.Kind == 0 {
		return fail(0, errors.New("the script is empty"))
	}
	if err := checkSchema(root); err != nil {
		return nil, scriptErrors(name, err)
	}
	s := &Script{name: name}
	if err := root.Decode(s); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fail(0, errors.New(strings.Join(te.Errors, "; ")))
		}
		return fail(0, err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// isJSON decides a script's format from its name, or its first character.
func isJSON(name string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return true
	case ".yaml", ".yml":
		return false
	}
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n\ufeff"), []byte("{"))
}

// Has reports whether the script has entries for role r. A workflow that
// finds no evaluator entries sorts review items itself instead of running
// an evaluator session, which the script driver would refuse.
func (s *Script) Has(r agent.Role) bool {
	if s == nil {
		return false
	}
	switch r {
	case agent.RoleArchitect:
		return len(s.Architect) > 0
	case agent.RoleDeveloper:
		return len(s.Developer) > 0
	case agent.RoleReviewer:
		return len(s.Reviewer) > 0
	case agent.RoleEvaluator:
		return len(s.Evaluator) > 0
	case agent.RoleSummarizer:
		return len(s.Summarizer) > 0
	case agent.RoleDoctor:
		return len(s.Doctor) > 0
	case agent.RoleReplanner:
		return len(s.Replanner) > 0
	}
	return false
}

// Validate checks the values of a script: what Load checks after the
// keys and types, for a Script built in Go. Files are not checked.
func (s *Script) Validate() error {
	v := &validator{file: s.displayName(), matches: map[Match]seen{}}
	for _, check := range []func(*validator) error{
		s.validateArchitect, s.validateDeveloper, s.validateReviewer, s.validateEvaluator,
		s.validateSummarizer, s.validateDoctor, s.validateReplanner,
	} {
		clear(v.matches)
		if err := check(v); err != nil {
			return err
		}
	}
	return nil
}

// seen is where an entry's match was first seen: its index and line.
type seen struct{ index, line int }

// validator holds what Validate's checks share: the file name errors
// carry and the matches one role's entries have used so far.
type validator struct {
	file    string
	matches map[Match]seen
}

// fail returns an *Error at line of the script.
func (v *validator) fail(line int, format string, args ...any) error {
	return &Error{File: v.file, Line: line, Err: fmt.Errorf(format, args...)}
}

// match checks entry i of role's match and usage, and that no earlier
// entry of the role matches the same sessions (it would shadow this one).
func (v *validator) match(role string, i int, m Match, line int, u state.Usage) error {
	where := fmt.Sprintf("%s[%d]", role, i)
	if m.Phase < 0 || m.Attempt < 0 || m.Iteration < 0 {
		return v.fail(line, "%s: phase, attempt and iteration count from 1 (0 or left out matches any)", where)
	}
	if err := checkUsage(u); err != nil {
		return v.fail(line, "%s: %v", where, err)
	}
	if prev, dup := v.matches[m]; dup {
		other := fmt.Sprintf("%s[%d]", role, prev.index)
		if prev.line > 0 {
			other += fmt.Sprintf(" at line %d", prev.line)
		}
		return v.fail(line, "%s: matches the same sessions (%s) as %s, so it would never be used", where, m, other)
	}
	v.matches[m] = seen{i, line}
	return nil
}

func (s *Script) validateArchitect(v *validator) error {
	for i, st := range s.Architect {
		where := fmt.Sprintf("architect[%d]", i)
		switch {
		case st.Plan != "" && st.PlanFile != "":
			return v.fail(st.line, "%s: give plan or plan_file, not both", where)
		case st.Plan == "" && st.PlanFile == "" && st.Error == "":
			return v.fail(st.line, "%s: needs plan, plan_file or error", where)
		case st.Error != "" && (st.Plan != "" || st.PlanFile != ""):
			return v.fail(st.line, "%s: an entry with error returns no plan; drop plan or error", where)
		}
		if err := checkUsage(st.Usage); err != nil {
			return v.fail(st.line, "%s: %v", where, err)
		}
	}
	return nil
}

func (s *Script) validateDeveloper(v *validator) error {
	for i, st := range s.Developer {
		where := fmt.Sprintf("developer[%d]", i)
		if err := v.match("developer", i, st.Match, st.line, st.Usage); err != nil {
			return err
		}
		switch st.Result {
		case "", agent.StatusFailed:
		case agent.StatusCompleted:
			if st.Error != "" {
				return v.fail(st.line, "%s: result is completed but error is set; use result: failed", where)
			}
		default:
			return v.fail(st.line, "%s: result %q is not completed or failed", where, st.Result)
		}
		for j, a := range st.Actions {
			if err := checkAction(a); err != nil {
				return v.fail(orLine(a.line, st.line), "%s.actions[%d]: %v", where, j, err)
			}
		}
	}
	return nil
}

// validateReviewer checks reviews and second opinions apart: they are
// different sessions, so each kind's entries must tell its own apart.
func (s *Script) validateReviewer(v *validator) error {
	for _, second := range []bool{false, true} {
		clear(v.matches)
		for i, st := range s.Reviewer {
			if st.SecondOpinion != second {
				continue
			}
			if err := v.match("reviewer", i, st.Match, st.line, st.Usage); err != nil {
				return err
			}
			if err := checkItems(st.Items, false); err != nil {
				return v.fail(st.line, "reviewer[%d]: %v", i, err)
			}
		}
	}
	return nil
}

func (s *Script) validateEvaluator(v *validator) error {
	for i, st := range s.Evaluator {
		if err := v.match("evaluator", i, st.Match, st.line, st.Usage); err != nil {
			return err
		}
		if err := checkItems(st.Items, true); err != nil {
			return v.fail(st.line, "evaluator[%d]: %v", i, err)
		}
	}
	return nil
}

func (s *Script) validateSummarizer(v *validator) error {
	for i, st := range s.Summarizer {
		if err := v.match("summarizer", i, st.Match, st.line, st.Usage); err != nil {
			return err
		}
		if (st.Text == "") == (st.Error == "") {
			return v.fail(st.line, "summarizer[%d]: give text or error, exactly one", i)
		}
	}
	return nil
}

// validateDoctor checks the doctor's entries, which a tier tells apart
// as well as a match.
func (s *Script) validateDoctor(v *validator) error {
	type tiered struct {
		Match
		tier string
	}
	seenTier := map[tiered]seen{}
	for i, st := range s.Doctor {
		where := fmt.Sprintf("doctor[%d]", i)
		if err := checkUsage(st.Usage); err != nil {
			return v.fail(st.line, "%s: %v", where, err)
		}
		if st.Tier != "" && st.Tier != "cheap" && st.Tier != "strong" {
			return v.fail(st.line, "%s: tier %q is not cheap or strong", where, st.Tier)
		}
		if (st.Answer == "") == (st.Error == "") {
			return v.fail(st.line, "%s: give answer or error, exactly one", where)
		}
		k := tiered{st.Match, st.Tier}
		if prev, dup := seenTier[k]; dup {
			return v.fail(st.line, "%s: matches the same sessions as doctor[%d], so it would never be used", where, prev.index)
		}
		seenTier[k] = seen{i, st.line}
	}
	return nil
}

func (s *Script) validateReplanner(v *validator) error {
	for i, st := range s.Replanner {
		if err := v.match("replanner", i, st.Match, st.line, st.Usage); err != nil {
			return err
		}
		if (st.Answer == "") == (st.Error == "") {
			return v.fail(st.line, "replanner[%d]: give answer or error, exactly one", i)
		}
	}
	return nil
}

// checkAction checks one action's values.
func checkAction(a Action) error {
	kind, _, _ := a.kind()
	switch {
	case kind == "":
		return errors.New("an action needs exactly one of write, edit, delete, mkdir, run, expand_context and wait")
	case kind == "wait" && !validWait(a.Wait):
		return fmt.Errorf("wait %q is not a duration such as 2s or 500ms", a.Wait)
	case kind == "expand_context" && a.ExpandContext < 1:
		return errors.New("expand_context names a phase, counting from 1")
	case a.AllowFailure && kind != "run":
		return errors.New("allow_failure goes with run only")
	case kind == "write" && a.Write.Path == "":
		return errors.New("write needs a path")
	case kind == "write" && a.Write.Content != "" && a.Write.ContentFile != "":
		return errors.New("write takes content or content_file, not both")
	case kind == "edit" && a.Edit.Path == "":
		return errors.New("edit needs a path")
	case kind == "edit" && a.Edit.Old == "":
		return errors.New("edit needs the old text to replace")
	}
	return nil
}

// checkItems checks review items; needDisposition makes dispositions required.
func checkItems(items []agent.ReviewItem, needDisposition bool) error {
	for i, it := range items {
		if strings.TrimSpace(it.Text) == "" {
			return fmt.Errorf("items[%d]: text is empty", i)
		}
		d, err := agent.ParseDisposition(string(it.Disposition))
		if err != nil {
			return fmt.Errorf("items[%d]: disposition %q is not IMPLEMENT, REJECT or DEFER", i, it.Disposition)
		}
		if d == "" && needDisposition {
			return fmt.Errorf("items[%d]: needs a disposition: IMPLEMENT, REJECT or DEFER", i)
		}
	}
	return nil
}

func checkUsage(u state.Usage) error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedTokens < 0 || u.CostUSD < 0 {
		return errors.New("usage counts cannot be negative")
	}
	return nil
}

// checkFiles checks that the files named by plan_file and content_file exist.
func (s *Script) checkFiles() error {
	check := func(line int, where, file string) error {
		if file == "" {
			return nil
		}
		if err := inputfile.Check(s.file(file), inputfile.Options{}); err != nil {
			return &Error{File: s.displayName(), Line: line, Err: fmt.Errorf("%s: %w", where, err)}
		}
		return nil
	}
	for i, st := range s.Architect {
		if err := check(st.line, fmt.Sprintf("architect[%d].plan_file", i), st.PlanFile); err != nil {
			return err
		}
	}
	for i, st := range s.Developer {
		for j, a := range st.Actions {
			if a.Write == nil {
				continue
			}
			if err := check(orLine(a.line, st.line), fmt.Sprintf("developer[%d].actions[%d].content_file", i, j), a.Write.ContentFile); err != nil {
				return err
			}
		}
	}
	return nil
}

// file resolves a path named in the script against its directory.
func (s *Script) file(p string) string {
	if filepath.IsAbs(p) || s.Dir == "" {
		return p
	}
	return filepath.Join(s.Dir, p)
}

// readFile reads a file named in the script.
func (s *Script) readFile(p string) (string, error) {
	b, err := inputfile.Read(s.file(p), MaxFileBytes, inputfile.Options{})
	if err != nil {
		return "", fmt.Errorf("agent: script %s: %w", s.displayName(), err)
	}
	return string(b), nil
}

func (s *Script) displayName() string {
	if s.name == "" {
		return "(in memory)"
	}
	return s.name
}

func orLine(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// scriptErrors turns what checkSchema found into one *Error per
// problem, joined (a single problem is returned as it is).
func scriptErrors(name string, err error) error {
	one := func(err error) error {
		var le *lineError
		if errors.As(err, &le) {
			return &Error{File: name, Line: le.line, Err: le.err}
		}
		return &Error{File: name, Err: err}
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return one(err)
	}
	errs := j.Unwrap()
	if len(errs) == 1 {
		return one(errs[0])
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = one(e)
	}
	return errors.Join(out...)
}

// validWait reports whether w is a duration a wait action takes: one
// time.ParseDuration reads, not negative.
func validWait(w string) bool {
	d, err := time.ParseDuration(w)
	return err == nil && d >= 0
}
