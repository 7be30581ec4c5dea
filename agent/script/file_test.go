package script

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

// writeScript writes a script file (and any extra files beside it) into a
// temporary directory and returns its path.
func writeScript(t *testing.T, name, content string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range extra {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const fullYAML = `# every feature once
architect:
  - plan_file: plan.md
  - plan: |
      # Revised
      ### Task 1: x
    summary: revised plan
    usage: {input_tokens: 10, output_tokens: 5, cost_usd: 0.01}
developer:
  - phase: 1
    attempt: 1
    actions:
      - write: {path: calc.go, content: "package calc\n"}
      - write: {path: big.go, content_file: big.go.txt}
      - edit: {path: calc.go, old: "calc", new: "calc2"}
      - delete: notes.txt
      - mkdir: internal/x
      - run: go test ./...
        allow_failure: true
    summary: did it
  - &failing
    phase: 2
    result: failed
    error: tests fail
  - <<: *failing
    attempt: 2
    result: completed
    error: ""
reviewer:
  - phase: 2
    iteration: 1
    approved: false
    comments: Sub is wrong
    items:
      - {text: fix Sub, disposition: implement}
      - {text: rename pkg, disposition: DEFER, reason: out of scope}
evaluator:
  - items:
      - {text: fix Sub, disposition: IMPLEMENT}
`

const fullJSON = `{
  "architect": [
    {"plan_file": "plan.md"},
    {"plan": "# Revised\n### Task 1: x\n", "summary": "revised plan",
     "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01}}
  ],
  "developer": [
    {"phase": 1, "attempt": 1, "summary": "did it", "actions": [
      {"write": {"path": "calc.go", "content": "package calc\n"}},
      {"write": {"path": "big.go", "content_file": "big.go.txt"}},
      {"edit": {"path": "calc.go", "old": "calc", "new": "calc2"}},
      {"delete": "notes.txt"},
      {"mkdir": "internal/x"},
      {"run": "go test ./...", "allow_failure": true}
    ]},
    {"phase": 2, "result": "failed", "error": "tests fail"},
    {"phase": 2, "attempt": 2, "result": "completed", "error": ""}
  ],
  "reviewer": [
    {"phase": 2, "iteration": 1, "approved": false, "comments": "Sub is wrong", "items": [
      {"text": "fix Sub", "disposition": "implement"},
      {"text": "rename pkg", "disposition": "DEFER", "reason": "out of scope"}
    ]}
  ],
  "evaluator": [{"items": [{"text": "fix Sub", "disposition": "IMPLEMENT"}]}]
}
`

func TestLoadScriptYAMLAndJSONAgree(t *testing.T) {
	extra := map[string]string{"plan.md": "# Plan\n", "big.go.txt": "package calc\n"}
	y, err := Load(writeScript(t, "s.yaml", fullYAML, extra))
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	j, err := Load(writeScript(t, "s.json", fullJSON, extra))
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	sniffed, err := Load(writeScript(t, "script", fullJSON, extra))
	if err != nil {
		t.Fatalf("sniffed JSON: %v", err)
	}
	if len(y.Architect) != 2 || y.Architect[0].PlanFile != "plan.md" || y.Architect[1].Usage.InputTokens != 10 {
		t.Errorf("architect = %+v", y.Architect)
	}
	if len(y.Developer) != 3 || len(y.Developer[0].Actions) != 6 || !y.Developer[0].Actions[5].AllowFailure {
		t.Errorf("developer = %+v", y.Developer)
	}
	if m := y.Developer[2]; m.Phase != 2 || m.Attempt != 2 || m.Result != agent.StatusCompleted {
		t.Errorf("merged entry = %+v", m)
	}
	if !y.Has(agent.RoleEvaluator) || !y.Has(agent.RoleReviewer) || (&Script{}).Has(agent.RoleEvaluator) {
		t.Error("Has is wrong")
	}
	// Apart from lines, names and directories, the two formats read the same.
	for _, s := range []*Script{y, j, sniffed} {
		stripLines(s)
	}
	if !reflect.DeepEqual(y, j) || !reflect.DeepEqual(j, sniffed) {
		t.Errorf("YAML and JSON differ:\n%+v\n%+v", y, j)
	}
}

// stripLines clears what differs between two loads of the same script.
func stripLines(s *Script) {
	s.name, s.Dir = "", ""
	for i := range s.Architect {
		s.Architect[i].line = 0
	}
	for i := range s.Developer {
		s.Developer[i].line = 0
		for j := range s.Developer[i].Actions {
			s.Developer[i].Actions[j].line = 0
		}
	}
	for i := range s.Reviewer {
		s.Reviewer[i].line = 0
	}
	for i := range s.Evaluator {
		s.Evaluator[i].line = 0
	}
}

func TestLoadScriptErrors(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                []string // all must appear in the error
	}{
		{"unknown top-level key", "s.yaml", "architect: []\ndevelopers: []\n",
			[]string{"line 2", `unknown key "developers"`, "architect, developer, reviewer, evaluator"}},
		{"unknown key in an entry", "s.yaml", "developer:\n  - phase: 1\n    sumary: x\n",
			[]string{"line 3", `unknown key "sumary"`, "developer[0]", "summary"}},
		{"unknown key in an action", "s.yaml", "developer:\n  - actions:\n      - write: {path: a, contnet: b}\n",
			[]string{"line 3", `unknown key "contnet"`, "developer[0].actions[0].write"}},
		{"revision is not a developer key", "s.yaml", "developer:\n  - revision: 1\n",
			[]string{"line 2", `unknown key "revision"`}},
		{"unknown key in JSON", "s.json", "{\n  \"reviewer\": [\n    {\"approved\": true,\n     \"verdict\": \"ok\"}\n  ]\n}\n",
			[]string{"line 4", `unknown key "verdict"`, "reviewer[0]"}},
		{"wrong type", "s.yaml", "developer:\n  - phase: two\n",
			[]string{"line 2", "phase: want a whole number", `"two"`}},
		{"wrong type in JSON", "s.json", "{\"developer\": [\n{\"phase\": \"1\"}]}",
			[]string{"line 2", "want a whole number"}},
		{"list expected", "s.yaml", "developer:\n  phase: 1\n",
			[]string{"line 2", "developer: want a list, got a mapping"}},
		{"bool expected", "s.yaml", "reviewer:\n  - approved: yes\n",
			[]string{"line 2", "approved: want true or false"}},
		{"bad result", "s.yaml", "developer:\n  - phase: 1\n    result: done\n",
			[]string{"line 2", `result "done" is not completed or failed`}},
		{"completed with error", "s.yaml", "developer:\n  - result: completed\n    error: boom\n",
			[]string{"line 2", "use result: failed"}},
		{"approved missing", "s.yaml", "reviewer:\n  - phase: 1\n    comments: x\n",
			[]string{"line 2", "needs approved"}},
		{"approved left empty", "s.yaml", "reviewer:\n  - phase: 1\n    approved:\n",
			[]string{"line 3", "reviewer[0].approved: needs a value"}},
		{"write without content", "s.yaml", "developer:\n  - actions:\n      - write: {path: a.go}\n",
			[]string{"line 3", "needs content or content_file"}},
		{"edit without new", "s.yaml", "developer:\n  - actions:\n      - edit: {path: a.go, old: x}\n",
			[]string{"line 3", "needs new"}},
		{"two kinds in one action", "s.yaml", "developer:\n  - actions:\n      - write: {path: a, content: b}\n        run: ls\n",
			[]string{"line 3", "exactly one of write, edit, delete, mkdir, run, expand_context and wait"}},
		{"empty action", "s.yaml", "developer:\n  - actions:\n      - {}\n",
			[]string{"line 3", "exactly one of"}},
		{"allow_failure without run", "s.yaml", "developer:\n  - actions:\n      - delete: x\n        allow_failure: true\n",
			[]string{"line 3", "allow_failure goes with run only"}},
		{"duplicate match", "s.yaml", "developer:\n  - phase: 1\n  - attempt: 1\n  - phase: 1\n",
			[]string{"line 4", "developer[2]", "phase 1", "developer[0] at line 2", "never be used"}},
		{"duplicate key", "s.yaml", "developer:\n  - phase: 1\n    phase: 2\n",
			[]string{"line 3", `"phase"`, "line 2"}},
		{"duplicate key in JSON", "s.json", "{\"architect\": [],\n \"architect\": []}",
			[]string{"line 2", `"architect" is already given at line 1`}},
		{"negative phase", "s.yaml", "developer:\n  - phase: -1\n",
			[]string{"line 2", "count from 1"}},
		{"plan and plan_file", "s.yaml", "architect:\n  - plan: x\n    plan_file: y\n",
			[]string{"line 2", "not both"}},
		{"architect entry without plan", "s.yaml", "architect:\n  - summary: x\n",
			[]string{"line 2", "needs plan, plan_file or error"}},
		{"missing plan_file", "s.yaml", "architect:\n  - plan_file: nope.md\n",
			[]string{"line 2", "architect[0].plan_file", "nope.md"}},
		{"missing content_file", "s.yaml", "developer:\n  - actions:\n    - write: {path: a, content_file: nope.txt}\n",
			[]string{"line 3", "content_file"}},
		{"bad disposition", "s.yaml", "reviewer:\n  - approved: false\n    items: [{text: a, disposition: LATER}]\n",
			[]string{"line 2", `"LATER"`}},
		{"evaluator item without disposition", "s.yaml", "evaluator:\n  - items: [{text: a}]\n",
			[]string{"line 2", "needs a disposition"}},
		{"evaluator without items", "s.yaml", "evaluator:\n  - phase: 1\n",
			[]string{"line 2", "needs items"}},
		{"YAML syntax", "s.yaml", "developer:\n  - phase: 1\n   bad indent: [\n",
			[]string{"line"}},
		{"JSON syntax", "s.json", "{\n\"developer\": [\n{\"phase\": 1,}\n]}",
			[]string{"line 3", "invalid character"}},
		{"JSON trailing text", "s.json", "{}\n{}\n",
			[]string{"line 2", "after the JSON document"}},
		{"JSON cut short", "s.json", "{\"developer\": [",
			[]string{"ends too soon"}},
		{"alias inside its anchor", "s.yaml", "developer:\n  - &a\n    phase: 1\n    <<: *a\n",
			[]string{"line 4", "contains it"}},
		{"aliases that expand without end", "s.yaml", mergeBomb(8),
			[]string{"too large"}},
		{"JSON nested too deeply", "s.json", strings.Repeat("[", 5000), []string{"line 1", "nest more than"}},
		{"empty", "s.yaml", "", []string{"empty"}},
		{"not a mapping", "s.yaml", "- a\n- b\n", []string{"line 1", "a script is a mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, tt.file, tt.content, nil)
			_, err := Load(path)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), "script "+path+": ") {
				t.Errorf("error %q does not start with the file", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// mergeBomb returns a script whose merge keys expand to 10^levels entries.
func mergeBomb(levels int) string {
	var b strings.Builder
	b.WriteString("developer:\n  - &a0 {phase: 1}\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - &a%d {<<: [%s], attempt: %d}\n", i, refs, i)
	}
	return b.String()
}

func TestLoadScriptMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

func TestLoadDemoScript(t *testing.T) {
	path := filepath.Join("..", "examples", "demo", "script.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Skip("no demo script")
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Has(agent.RoleArchitect) || !s.Has(agent.RoleDeveloper) || !s.Has(agent.RoleReviewer) {
		t.Errorf("demo script: %+v", s)
	}
}

func TestMatchString(t *testing.T) {
	if got := (Match{}).String(); got != "any session" {
		t.Errorf("empty match = %q", got)
	}
	if got := (Match{Phase: 2, Iteration: 3}).String(); got != "phase 2, iteration 3" {
		t.Errorf("match = %q", got)
	}
}

// TestScriptFormatExamples keeps the examples in SCRIPT-FORMAT.md loadable.
func TestScriptFormatExamples(t *testing.T) {
	doc, err := os.ReadFile("SCRIPT-FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for _, block := range strings.Split(string(doc), "```")[1:] {
		lang, body, _ := strings.Cut(block, "\n")
		if lang != "yaml" && lang != "json" || !strings.Contains(body, "developer") {
			continue // a fragment, or the text between two blocks
		}
		s, err := Parse("example."+lang, []byte(body))
		if err != nil {
			t.Errorf("the %s example does not load: %v\n%s", lang, err, body)
			continue
		}
		if !s.Has(agent.RoleDeveloper) || !s.Has(agent.RoleReviewer) {
			t.Errorf("the %s example lost its entries", lang)
		}
		checked[lang]++
	}
	if checked["yaml"] == 0 || checked["json"] == 0 {
		t.Errorf("examples checked: %v", checked)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add("s.yaml", fullYAML)
	f.Add("s.json", fullJSON)
	f.Add("s.yaml", "developer:\n  - &a {phase: 1}\n  - <<: *a\n    attempt: 2\n")
	f.Add("s.json", `{"reviewer": [{"approved": true, "items": [{"text": "x"}]}]}`)
	f.Add("s", "{")
	f.Fuzz(func(t *testing.T, name, data string) {
		s, err := Parse(name, []byte(data))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("a parsed script does not validate: %v", err)
		}
	})
}

// TestParseScriptListsEveryProblem checks that a script's schema problems
// are all reported, each with its line, in the order of the file, and that
// a mapping with a misspelt key does not also report the key as missing.
func TestParseScriptListsEveryProblem(t *testing.T) {
	src := "architect:\n  - plann: x\n" + // line 2: misspelt
		"developer:\n  - phase: one\n" + // line 4: wrong type
		"reviewr: []\n" // line 5: unknown role
	_, err := Parse("s.yaml", []byte(src))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want an invalid script", err)
	}
	want := "script s.yaml: line 2: unknown key \"plann\" in architect[0] (known keys: plan, plan_file, summary, error, usage)\n" +
		"script s.yaml: line 4: developer[0].phase: want a whole number, got \"one\"\n" +
		"script s.yaml: line 5: unknown key \"reviewr\" at the top level (known keys: architect, developer, reviewer, evaluator, summarizer, doctor, replanner)"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	var many strings.Builder
	for i := range maxProblems + 5 {
		fmt.Fprintf(&many, "k%d: 1\n", i)
	}
	_, err = Parse("s.yaml", []byte(many.String()))
	if lines := strings.Split(err.Error(), "\n"); len(lines) != maxProblems+1 || lines[maxProblems] != "script s.yaml: and 5 more problem(s)" {
		t.Errorf("%d lines, last %q; want %d and the count of the rest", len(lines), lines[len(lines)-1], maxProblems+1)
	}
}
