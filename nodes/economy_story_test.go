package nodes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/story"
)

// The Task Story's prompts, played through the workflow on the economy
// benchmark's fixtures and generated runs (economy_test.go): what a
// prompt carries, what it leaves out, and how it grows.

// TestStoryPromptStripsToSignposting: the benchmark's signposting prompt
// is the Task Story's prompt with its story block taken out, byte for
// byte what PhasePrompt gives; and the story replaces the summary
// signpost instead of adding to it.
func TestStoryPromptStripsToSignposting(t *testing.T) {
	for _, cur := range []int{0, 1, 3} {
		s := plannedState(t, phasedPlan(4), cur)
		plain, err := PhasePrompt(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range []StoryContext{
			{SoFar: "## Story so far\nMethods:\n- A.B() error\n"},
			{ThisPhase: "## This phase so far\nDecisions:\n- use x\n"},
			{SoFar: "## Story so far\nMethods:\n- A.B() error\n", ThisPhase: "## This phase so far\nDecisions:\n- use x\n"},
		} {
			p, err := PhasePromptWith(s, sc)
			if err != nil {
				t.Fatal(err)
			}
			if got := stripStory(p); got != plain {
				t.Errorf("phase %d: stripped story prompt differs from PhasePrompt:\n%s\n---\n%s", cur+1, got, plain)
			}
			if !strings.Contains(p, storySignpostLead) || strings.Count(p, s.Run.ExecDir) != 1 {
				t.Errorf("phase %d: the story prompt repeats the signposts:\n%s", cur+1, p)
			}
		}
	}
}

// longRun is a generated fixture of n phases in which every phase
// decides, builds and closes something, but the live facts stop growing
// after the first phases: four decision topics and three methods are
// superseded in turn, each phase's TODO is closed by the next. What a
// later phase must know is then the same at phase 12 and at phase 24.
func longRun(t *testing.T, n int) ecoFixture {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: long-run\ngoal: a key-value store built over %d phases\ntasks: [", n)
	for k := 1; k <= n; k++ {
		if k > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "step %02d", k)
	}
	b.WriteString("]\nmust_keep: []\nscript:\n  developer:\n")
	for k := 1; k <= n; k++ {
		v := "AB"[k/4%2 : k/4%2+1]
		fmt.Fprintf(&b, "    - phase: %d\n      summary: Step %02d done.\n", k, k)
		fmt.Fprintf(&b, "      decisions: [{topic: area%d, what: \"area %d uses approach %s\", why: \"measured in step %02d\"}]\n", k%4, k%4, v, k)
		fmt.Fprintf(&b, "      methods: [\"Store.Get%d(ctx context.Context, key string, opt%s int) (Value, error)\"]\n", k%3, v)
		fmt.Fprintf(&b, "      commands: [\"TODO: check step %02d\"", k)
		if k > 1 {
			fmt.Fprintf(&b, ", \"DONE: check step %02d\"", k-1)
		}
		if k == 2 {
			b.WriteString(", \"NOT TODO: cache values in process memory\"")
		}
		b.WriteString("]\n")
		fmt.Fprintf(&b, "      recommendations: [\"profile step %02d\"]\n", k)
		if k == 1 {
			b.WriteString("      requirements: [\"Every read must finish in under 5 ms.\"]\n      dependencies: [dgraph-io/badger/v4]\n")
		}
	}
	var f ecoFixture
	if err := yaml.Unmarshal([]byte(b.String()), &f); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return f
}

// TestStoryFlatOverLongRun plays a 24-phase run through the workflow and
// compares what phase 12 and phase 24 receive: the Task Story's prompt
// holds the live facts (superseded ones gone) and what the agents stated
// (summaries, reasons, recommendations) while the budget allows, growing
// by a fraction of what full history adds, and never past its budgets
// (story.TestOverBudgetWhenVerbatimItemsDoNotFit).
func TestStoryFlatOverLongRun(t *testing.T) {
	f := longRun(t, 24)
	sessions, rs, _, _ := playFixture(t, f, false)
	first := map[int]ecoSession{}
	devs := 0
	for _, s := range sessions {
		if s.s.Role != agent.RoleDeveloper {
			continue
		}
		devs++
		if _, ok := first[s.s.Phase]; !ok {
			first[s.s.Phase] = s
		}
	}
	if devs != 24 || len(rs) != 24 {
		t.Fatalf("%d developer sessions and %d records, want 24 of each", devs, len(rs))
	}
	at := func(k int) (storyT, sign, full int, p string) {
		p = first[k].s.Prompt
		var before []story.Record
		for _, r := range rs {
			if r.Phase < k {
				before = append(before, r)
			}
		}
		return story.Tokens(p), story.Tokens(stripStory(p)), story.Tokens(withHistory(stripStory(p), before)), p
	}
	s12, sign12, full12, p12 := at(12)
	s24, sign24, full24, p24 := at(24)
	t.Logf("phase 12 → 24: task story %d → %d, signposting %d → %d, full history %d → %d", s12, s24, sign12, sign24, full12, full24)
	// What the agents stated in the twelve phases between (each phase's
	// summary and recommendation) stays while the budget allows: the
	// story grows by those, a fifth of what full history adds at most,
	// and its Level 2 never passes its budget.
	if d := s24 - s12; d < 0 || d*5 > full24-full12 {
		t.Errorf("task story: %d tokens at phase 12, %d at phase 24; full history %d → %d", s12, s24, full12, full24)
	}
	if l2 := storyTokens(p24, "Story so far"); l2 > story.Level2Budget {
		t.Errorf("Level 2 is %d tokens at phase 24, over its budget %d", l2, story.Level2Budget)
	}
	if full24-full12 < 10*(sign24-sign12+1) || full24 < full12+500 {
		t.Errorf("full history: %d tokens at phase 12, %d at phase 24: it should grow", full12, full24)
	}
	live := []string{"Every read must finish in under 5 ms.", "dgraph-io/badger/v4", "NOT TODO: cache values in process memory",
		"Store.Get0(ctx context.Context, key string, optB int) (Value, error)", "area 3 uses approach B (why: measured in step 23)", "TODO: check step 23",
		"profile step 23", "phase 23: Step 23 done."}
	if kept, share := story.Retention(p24, live); share != 1 {
		t.Errorf("phase 24 keeps %v of %v", kept, live)
	}
	for _, gone := range []string{"optA int", "approach A", "TODO: check step 22", "measured in step 19"} {
		if strings.Contains(p24, gone) {
			t.Errorf("phase 24's prompt keeps superseded text %q:\n%s", gone, p24)
		}
	}
	if !strings.Contains(p12, "### Story so far") {
		t.Errorf("phase 12 has no story:\n%s", p12)
	}
}

// TestStoryRetryPromptSaysNothingTwice plays the auth-service fixture,
// whose phase 6 is rejected once after deciding that sessions are opaque
// tokens instead of signed JWTs: the second iteration's prompt carries the
// new decision (in this phase so far) and not the superseded one (the
// story so far is computed again without it), and the story signpost does
// not send the agent to the summaries the story already holds.
func TestStoryRetryPromptSaysNothingTwice(t *testing.T) {
	var f ecoFixture
	for _, g := range loadFixtures(t) {
		if g.Name == "auth-service" {
			f = g
		}
	}
	sessions, _, _, _ := playFixture(t, f, false)
	var p string
	for _, s := range sessions {
		if s.s.Role == agent.RoleDeveloper && s.s.Phase == 6 && s.s.Iteration == 2 {
			p = s.s.Prompt
		}
	}
	if p == "" {
		t.Fatal("no second review iteration of phase 6")
	}
	if !strings.Contains(section(p, "This phase so far"), "sessions are opaque random tokens stored hashed") {
		t.Errorf("the retry lost this phase's decision:\n%s", p)
	}
	if strings.Contains(p, "sessions are signed JWTs") {
		t.Errorf("the retry's prompt keeps the decision this phase superseded:\n%s", p)
	}
	if strings.Contains(p, "summary.md") || strings.Count(p, "NOT TODO: write our own crypto primitives") != 1 {
		t.Errorf("the retry's prompt repeats itself:\n%s", p)
	}
}

// TestSupersededAndBracketsInEveryPrompt plays the plugin-registry
// fixture: a requirement changed in phase 9 and a method renamed in
// phase 10 are absent from every prompt after, and the storage layout
// plugins/<name>/<version> reaches every later prompt, every story file
// and every summary.md with its brackets raw, never as \u003c.
func TestSupersededAndBracketsInEveryPrompt(t *testing.T) {
	t.Parallel()
	var f ecoFixture
	for _, g := range loadFixtures(t) {
		if g.Name == "plugin-registry" {
			f = g
		}
	}
	sessions, rs, end, root := playFixture(t, f, false)
	const layout = "plugins/<name>/<version>/"
	devs := 0
	for _, s := range sessions {
		if s.s.Role != agent.RoleDeveloper {
			continue
		}
		devs++
		p := s.s.Prompt
		if s.s.Phase > 1 && !strings.Contains(p, layout) {
			t.Errorf("phase %d's prompt lacks %s", s.s.Phase, layout)
		}
		if strings.Contains(p, `\u003c`) || strings.Contains(p, `\u003e`) {
			t.Errorf("phase %d's prompt escapes brackets", s.s.Phase)
		}
		if s.s.Phase > 9 && strings.Contains(p, "at most 3 versions") {
			t.Errorf("phase %d's prompt keeps the requirement phase 9 changed:\n%s", s.s.Phase, p)
		}
		if s.s.Phase > 10 && strings.Contains(p, "Registry.Fetch") {
			t.Errorf("phase %d's prompt keeps the name phase 10 renamed:\n%s", s.s.Phase, p)
		}
		if s.s.Phase > 10 && !strings.Contains(p, "Registry.Resolve(ctx context.Context, name, version string) (Plugin, error)") {
			t.Errorf("phase %d's prompt lacks the renamed method", s.s.Phase)
		}
	}
	if devs < len(f.Tasks) || len(rs) == 0 {
		t.Fatalf("%d developer sessions and %d records", devs, len(rs))
	}
	files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(storyDir(end)), "*.json"))
	if err != nil || len(files) != len(rs) {
		t.Fatalf("%d story files for %d records (%v)", len(files), len(rs), err)
	}
	sums, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(end.Run.ExecDir), "phase-*", "summary.md"))
	seen := 0
	for _, name := range append(files, sums...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `\u003c`) || strings.Contains(string(data), `\u003e`) {
			t.Errorf("%s escapes brackets:\n%s", name, data)
		}
		if strings.Contains(string(data), layout) {
			seen++
		}
	}
	if seen < len(sums) {
		t.Errorf("the layout is raw in %d of %d story files and summaries; want every summary and phase 1's record", seen, len(files)+len(sums))
	}
}
