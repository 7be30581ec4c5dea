package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
	"github.com/gaffer-dev/gaffer/workspace"
)

// The context-economy benchmark (issue 12): scripted runs of 6–16 phases,
// each with the facts a later phase must keep, played through the real
// workflow (script driver, real git), and what each phase's developer
// receives measured under six strategies. A fact counts from the phase
// after the first session that states it — a developer's report or a
// reviewer's review — whether or not a record holds it (issue 33). Three
// fixtures (pressure: true) fill the story so far before their halfway
// phase:
//
//   - signposting: today's prompt, paths only (the Task Story's prompt with
//     its story block taken out: the same bytes PhasePrompt gives);
//   - signposting_followed: that prompt plus the files it names, read by a
//     diligent agent (plan.md and every earlier summary.md; see followed);
//   - signposting_followed_latest: that prompt plus the latest summary.md
//     only, the cheapest reading that reaches every fact;
//   - full_history: signposting plus every earlier decision record pasted
//     in full;
//   - task_story: the prompt the workflow sends (Level 2 story so far,
//     Level 1 for the phase);
//   - task_story_summarizer: the same with a scripted summarizer, which
//     tightens the deterministic story and, at one boundary per fixture,
//     invents a fact (which the check must refuse).
//
// Tokens are story.Tokens (offline approximation). The benchmark prints,
// per fixture, the largest story so far against its budget and which
// facts each story and full history lost in which phases. The report is JSON;
// testdata/context-economy.json is the committed baseline that
// TestContextEconomyBaseline checks (tokens may exceed it by 10%,
// retention may not drop). GAFFER_UPDATE_BASELINE=1 rewrites it.

const (
	ecoDir       = "testdata/context-economy"
	ecoBaseline  = "testdata/context-economy.json"
	ecoUpdateEnv = "GAFFER_UPDATE_BASELINE"
)

// The strategies, in report order.
const (
	stratSignpost   = "signposting"
	stratFollowed   = "signposting_followed"
	stratLatest     = "signposting_followed_latest"
	stratFull       = "full_history"
	stratStory      = "task_story"
	stratSummarizer = "task_story_summarizer"
)

var strategies = []string{stratSignpost, stratFollowed, stratLatest, stratFull, stratStory, stratSummarizer}

type ecoFixture struct {
	Name     string   `yaml:"name"`
	Goal     string   `yaml:"goal"`
	Tasks    []string `yaml:"tasks"`
	MustKeep []string `yaml:"must_keep"`
	// Superseded are texts a later record supersedes: a plain string is
	// checked in the last phase's prompt; {text, phase} in every prompt
	// after that phase (the one whose record supersedes it).
	Superseded []supersededItem `yaml:"superseded"`
	// Pressure marks a fixture written to fill the story so far: its
	// Level 2 must reach its budget before the halfway phase, and the
	// Task Story must keep at least minPressureRetention of the facts at
	// worst and minPressureMean on average (issue 33).
	Pressure bool `yaml:"pressure"`
	Decoy    struct {
		Phase int    `yaml:"phase"`
		Text  string `yaml:"text"`
	} `yaml:"decoy"`
	Script yaml.Node `yaml:"script"`
}

// supersededItem is a superseded text, and the phase from which on no
// prompt may carry it (0: the last phase's only).
type supersededItem struct {
	Text  string
	Phase int
}

// UnmarshalYAML reads a plain string or a {text, phase} mapping.
func (s *supersededItem) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.Text = n.Value
		return nil
	}
	var dec struct {
		Text  string `yaml:"text"`
		Phase int    `yaml:"phase"`
	}
	for i := 0; n.Kind == yaml.MappingNode && i < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "text" && k != "phase" {
			return fmt.Errorf("line %d: unknown key %q in a superseded item (known keys: text, phase)", n.Content[i].Line, k)
		}
	}
	if err := n.Decode(&dec); err != nil {
		return err
	}
	if dec.Text == "" || dec.Phase < 1 {
		return fmt.Errorf("line %d: a superseded item needs text and a phase of 1 or more", n.Line)
	}
	s.Text, s.Phase = dec.Text, dec.Phase
	return nil
}

func (f ecoFixture) plan() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n", f.Goal)
	for i, t := range f.Tasks {
		fmt.Fprintf(&b, "### Task %d: %s\n\nDo %s for: %s.\n\n", i+1, t, t, f.Goal)
	}
	return b.String()
}

// StrategyResult is one strategy's measures on one fixture.
type StrategyResult struct {
	PromptTokens    []int   `json:"prompt_tokens_per_phase"` // the first session of each phase
	Slope           float64 `json:"slope_tokens_per_phase"`  // least squares over phases
	TotalTokens     int     `json:"total_context_tokens"`    // every developer session, plus the summarizer's
	RetentionMin    float64 `json:"retention_min"`
	RetentionMean   float64 `json:"retention_mean"`
	Invented        int     `json:"invented_facts"`
	Stale           int     `json:"superseded_in_last_phase"`
	Expansions      int     `json:"escape_hatch_calls"`
	SummarizerShare float64 `json:"summarizer_share"`
	Summaries       int     `json:"summaries_accepted,omitempty"` // boundaries whose summarizer text passed story.CheckSummary
	MaxLevel1       int     `json:"max_level1_tokens,omitempty"`
	MaxLevel2       int     `json:"max_level2_tokens,omitempty"`
	// FullFrom is the first phase whose story so far is at 90% of its
	// budget or more; 0 when none is.
	FullFrom int `json:"story_full_from_phase,omitempty"`
	// Lost lists, for the stories and full history, each must-keep fact
	// a phase's prompt did not carry although an earlier phase stated it.
	Lost []LostFact `json:"lost,omitempty"`
}

// LostFact is a must-keep fact missing from the prompt of a phase.
type LostFact struct {
	Phase int    `json:"phase"`
	Fact  string `json:"fact"`
}

// FixtureResult is every strategy on one fixture.
type FixtureResult struct {
	Name       string                    `json:"name"`
	Phases     int                       `json:"phases"`
	Facts      int                       `json:"must_keep_facts"`
	Pressure   bool                      `json:"pressure,omitempty"`
	Strategies map[string]StrategyResult `json:"strategies"`
}

// EconomyReport is the benchmark's JSON report.
type EconomyReport struct {
	TokenCounter string          `json:"token_counter"`
	Fixtures     []FixtureResult `json:"fixtures"`
}

// ecoFixturesEnv names a directory of more fixtures, in the same format,
// that BenchmarkContextEconomy plays after the committed ones.
const ecoFixturesEnv = "GAFFER_CONTEXT_FIXTURES"

func loadFixtures(t testing.TB) []ecoFixture {
	t.Helper()
	return loadFixturesFrom(t, ecoDir, 6)
}

// loadFixturesFrom reads the fixtures of dir, at least least of them.
func loadFixturesFrom(t testing.TB, dir string, least int) []ecoFixture {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(names) < least {
		t.Fatalf("want %d fixtures or more in %s, got %d (%v)", least, dir, len(names), err)
	}
	var out []ecoFixture
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var f ecoFixture
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if len(f.Tasks) < 6 || len(f.Tasks) > 16 || len(f.MustKeep) == 0 {
			t.Fatalf("%s: %d phases and %d must-keep facts; want 6–16 and some", n, len(f.Tasks), len(f.MustKeep))
		}
		out = append(out, f)
	}
	return out
}

// ecoSession is one session and its report, as the workflow ran it.
type ecoSession struct {
	s   agent.Session
	rep agent.Report
}

type ecoRecorder struct {
	inner agent.Driver
	mu    sync.Mutex
	all   []ecoSession
}

func (d *ecoRecorder) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	rep, err := d.inner.Run(ctx, s)
	d.mu.Lock()
	s.OnMessage = nil
	d.all = append(d.all, ecoSession{s, rep})
	d.mu.Unlock()
	return rep, err
}

// scriptedSummarizer tightens the deterministic story it is given (it
// drops the open TODOs and other commands, keeping the NOT TODOs) and, at
// the fixture's decoy phase, adds an invented fact.
type scriptedSummarizer struct {
	decoyPhase int
	decoy      string
}

func (z scriptedSummarizer) Run(_ context.Context, s agent.Session) (agent.Report, error) {
	i, j := strings.Index(s.Prompt, storySection), strings.Index(s.Prompt, "\n## The records of")
	if i < 0 || j < i {
		return agent.Report{Status: agent.StatusFailed, Error: "no story in the prompt"}, nil
	}
	var out []string
	commands := false
	for l := range strings.Lines(s.Prompt[i:j]) {
		l = strings.TrimRight(l, "\n")
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, "- ") {
			commands = l == "Commands:"
		}
		if commands && strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "- NOT TODO") {
			continue
		}
		out = append(out, l)
	}
	if len(out) > 0 && out[len(out)-1] == "Commands:" {
		out = out[:len(out)-1]
	}
	text := strings.Join(out, "\n") + "\n"
	if s.Phase == z.decoyPhase {
		text += z.decoy + "\n"
	}
	return agent.Report{Status: agent.StatusCompleted, Output: text, Summary: "story so far",
		Usage: state.Usage{InputTokens: story.Tokens(s.Prompt), OutputTokens: story.Tokens(text)}}, nil
}

// playFixture runs f through the workflow and returns the sessions and
// the story's records.
func playFixture(t testing.TB, f ecoFixture, summarizer bool) ([]ecoSession, []story.Record, state.ExecutionState, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := workspace.Init(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# "+f.Name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit(ctx, "initial", nil, workspace.CommitOptions{
		Author: workspace.Signature{Name: "t", Email: "t@example.invalid"}, When: fixedTime}); err != nil {
		t.Fatal(err)
	}
	raw, err := yaml.Marshal(&f.Script)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse(f.Name+".yaml", raw)
	if err != nil {
		t.Fatalf("fixture %s: %v", f.Name, err)
	}
	rec := &ecoRecorder{inner: script.NewDriver(sc, script.Options{})}
	sum := &ecoRecorder{inner: scriptedSummarizer{f.Decoy.Phase, f.Decoy.Text}}
	g, err := Build(Config{Repo: repo, Clock: func() time.Time { return fixedTime }, Drivers: func(role agent.Role, _ state.RunConfig) (agent.Driver, error) {
		switch role {
		case agent.RoleEvaluator:
			return nil, nil
		case agent.RoleSummarizer:
			return sum, nil
		}
		return rec, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.Compile(graph.WithStore(checkpoint.NewMemory()), graph.WithStepLimit(1000), graph.WithMerge(Merge))
	if err != nil {
		t.Fatal(err)
	}
	cfg := state.RunConfig{AutoApprove: true}
	if summarizer {
		cfg.Agents.Summarizer.Driver = "script"
	}
	s0, err := state.NewRun(state.RunInfo{ID: "eco-" + f.Name, Goal: f.Goal, CreatedAt: fixedTime}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s0.Plan.Markdown = f.plan()
	res, err := r.Run(ctx, s0.Run.ID, s0)
	if err != nil || res.State.Status != state.RunCompleted {
		t.Fatalf("fixture %s: %v, status %v %q", f.Name, err, res.State.Status, res.State.Errors)
	}
	w := &workflow{cfg: Config{Repo: repo}}
	rs, err := w.readStory(res.State)
	if err != nil {
		t.Fatal(err)
	}
	return append(rec.all, sum.all...), rs, res.State, dir
}

// stripStory takes the story block out of a phase prompt and puts the
// summary signpost back: the bytes PhasePrompt gives for the same state.
func stripStory(p string) string {
	i := strings.Index(p, storySignpostLead)
	j := strings.Index(p, "\n## Phase ")
	if i < 0 || j < i {
		return p
	}
	p = p[:i] + p[j:]
	var dir string
	var n int
	if k := strings.Index(p, "- The full plan: `"); k >= 0 {
		dir, _, _ = strings.Cut(p[k+len("- The full plan: `"):], "/plan.md`")
	}
	if _, err := fmt.Sscanf(p[strings.Index(p, "\n## Phase ")+len("\n## Phase "):], "%d of", &n); err != nil || n <= 1 {
		return p
	}
	prior := "- Prior work: `git log"
	k := strings.Index(p, prior)
	return p[:k] + summarySignpost(dir, n) + p[k:]
}

// withHistory pastes records into a signposting prompt, before the phase's
// own section.
func withHistory(p string, rs []story.Record) string {
	if len(rs) == 0 {
		return p
	}
	var b strings.Builder
	b.WriteString("\n## Full history: every earlier decision record\n")
	for _, r := range rs {
		data, _ := r.Encode()
		b.Write(data)
	}
	j := strings.Index(p, "\n## Phase ")
	return p[:j] + b.String() + p[j:]
}

// followed is what an agent receives when it follows a signposting
// prompt of phase (1-based) diligently: the prompt p, then each file the
// prompt names, read whole, under its path — plan.md and every earlier
// phase's summary.md (N = 1..phase-1), as the workflow committed them
// (each summary ends with the story so far at its boundary). With
// latest, only the last summary.md: the least reading that still reaches
// every fact, which the prompt does not tell the agent. The output of the
// git commands it names (git log, git show HEAD) is not counted, so this
// is a lower bound on what following the signposts costs.
func followed(t testing.TB, root string, s state.ExecutionState, p string, phase int, latest bool) string {
	t.Helper()
	var files []string
	if !latest {
		files = append(files, planPath(s))
	}
	for i := 0; i < phase-1; i++ {
		if !latest || i == phase-2 {
			files = append(files, summaryPath(s, i))
		}
	}
	var b strings.Builder
	b.WriteString(p)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("following the signposts: %v", err)
		}
		fmt.Fprintf(&b, "\n%s:\n%s", f, data)
	}
	return b.String()
}

// section returns the "### title" section of a prompt, or "".
func section(p, title string) string {
	i := strings.Index(p, "\n### "+title)
	if i < 0 {
		return ""
	}
	rest := p[i+1:]
	j := len(rest)
	for _, end := range []string{"\n### ", "\n## "} {
		if k := strings.Index(rest[1:], end); k >= 0 && k+1 < j {
			j = k + 1
		}
	}
	return rest[:j]
}

// storyTokens is the size of a story section of a prompt as the story
// package rendered it: the prompt nests it one heading level down ("#").
func storyTokens(p, title string) int {
	return story.Tokens(strings.TrimPrefix(section(p, title), "#"))
}

func slope(ys []int) float64 {
	n := float64(len(ys))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range ys {
		x := float64(i + 1)
		sx, sy, sxx, sxy = sx+x, sy+float64(y), sxx+x*x, sxy+x*float64(y)
	}
	return math.Round((n*sxy-sx*sy)/(n*sxx-sx*sx)*100) / 100
}

// measure computes one strategy's result from the prompts of the first
// session of each phase (firsts) and of all developer sessions (all).
func measure(f ecoFixture, plan string, rs []story.Record, introduced map[string]int, firsts []ecoSession, prompts map[int]string, all []string, extra int) StrategyResult {
	var res StrategyResult
	candidates := append(slices.Clone(f.MustKeep), strings.TrimPrefix(strings.TrimSpace(f.Decoy.Text), "- "))
	for _, s := range f.Superseded {
		candidates = append(candidates, s.Text)
	}
	res.RetentionMin = 1
	var sumRet float64
	scored := 0
	for k, fs := range firsts {
		p := prompts[k]
		res.PromptTokens = append(res.PromptTokens, story.Tokens(p))
		var due []string
		for _, fact := range f.MustKeep {
			if ph, ok := introduced[fact]; ok && ph < fs.s.Phase {
				due = append(due, fact)
			}
		}
		if len(due) > 0 {
			kept, share := story.Retention(p, due)
			res.RetentionMin = min(res.RetentionMin, share)
			sumRet += share
			scored++
			for _, fact := range due {
				if !slices.Contains(kept, fact) {
					res.Lost = append(res.Lost, LostFact{Phase: fs.s.Phase, Fact: fact})
				}
			}
		}
		if l2 := storyTokens(p, "Story so far"); res.FullFrom == 0 && l2*10 >= story.Level2Budget*9 {
			res.FullFrom = fs.s.Phase
		}
		var before []story.Record
		for _, r := range rs {
			if r.Phase < fs.s.Phase {
				before = append(before, r)
			}
		}
		res.Invented += len(story.Invented(p, plan+sourceOf(before), candidates))
		for _, s := range f.Superseded {
			if (s.Phase == 0 && k == len(firsts)-1 || s.Phase > 0 && fs.s.Phase > s.Phase) && strings.Contains(p, s.Text) {
				res.Stale++
			}
		}
	}
	if scored > 0 {
		res.RetentionMean = math.Round(sumRet/float64(scored)*1000) / 1000
	}
	res.Slope = slope(res.PromptTokens)
	for _, p := range all {
		res.TotalTokens += story.Tokens(p)
		res.MaxLevel1 = max(res.MaxLevel1, storyTokens(p, "This phase so far"))
		res.MaxLevel2 = max(res.MaxLevel2, storyTokens(p, "Story so far"))
	}
	if extra > 0 {
		res.TotalTokens += extra
		res.SummarizerShare = math.Round(float64(extra)/float64(res.TotalTokens)*1000) / 1000
	}
	return res
}

// introducedAt is, for each must-keep fact, the phase of the first
// session that states it: a developer's report (summary and story) or a
// reviewer's review (comments and items), whether or not a record holds
// it, so a fact that never reaches the story still counts against
// retention. A fact no session states is the fixture's error.
func introducedAt(t testing.TB, f ecoFixture, sessions []ecoSession) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, fact := range f.MustKeep {
		want := strings.Join(strings.Fields(fact), " ")
		for _, s := range sessions {
			var text string
			switch s.s.Role {
			case agent.RoleDeveloper:
				text = sourceOf([]story.Record{{Summary: s.rep.Summary, Facts: s.rep.Story}})
			case agent.RoleReviewer:
				var rv agent.Review
				if err := json.Unmarshal([]byte(s.rep.Output), &rv); err != nil {
					t.Fatalf("fixture %s: a review that is not JSON: %v", f.Name, err)
				}
				text = rv.Comments
				for _, it := range rv.Items {
					text += "\n" + it.Text
				}
			default:
				continue
			}
			if strings.Contains(strings.Join(strings.Fields(text), " "), want) {
				out[fact] = s.s.Phase
				break
			}
		}
		if _, ok := out[fact]; !ok {
			t.Fatalf("fixture %s: no session states the must-keep fact %q", f.Name, fact)
		}
	}
	return out
}

func sourceOf(rs []story.Record) string {
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

// economy plays every fixture and measures every strategy.
func economy(t testing.TB, fixtures []ecoFixture) EconomyReport {
	rep := EconomyReport{TokenCounter: "story.Tokens: ceil(UTF-8 bytes / 4)"}
	for _, f := range fixtures {
		fr := FixtureResult{Name: f.Name, Phases: len(f.Tasks), Facts: len(f.MustKeep), Pressure: f.Pressure, Strategies: map[string]StrategyResult{}}
		plan := f.plan()
		for _, withSum := range []bool{false, true} {
			sessions, rs, end, root := playFixture(t, f, withSum)
			introduced := introducedAt(t, f, sessions)
			var devs []ecoSession
			sumTokens, expansions := 0, 0
			for _, s := range sessions {
				switch s.s.Role {
				case agent.RoleDeveloper:
					devs = append(devs, s)
					expansions += s.rep.Expansions
				case agent.RoleSummarizer:
					sumTokens += s.rep.Usage.InputTokens + s.rep.Usage.OutputTokens
				}
			}
			var firsts []ecoSession
			isFirst := map[int]bool{}
			seen := map[int]bool{}
			for i, d := range devs {
				if !seen[d.s.Phase] {
					seen[d.s.Phase], isFirst[i] = true, true
					firsts = append(firsts, d)
				}
			}
			build := func(f func(i int, d ecoSession) string) (map[int]string, []string) {
				firstP := map[int]string{}
				var all []string
				k := 0
				for i, d := range devs {
					p := f(i, d)
					all = append(all, p)
					if isFirst[i] {
						firstP[k] = p
						k++
					}
				}
				return firstP, all
			}
			// records written before developer session i: those of
			// earlier phases, and of earlier attempts and iterations of
			// its own (a reviewer's record follows its iteration's session).
			before := func(i int) []story.Record {
				s := devs[i].s
				var out []story.Record
				for _, r := range rs {
					if r.Phase < s.Phase || r.Phase == s.Phase && (r.Attempt < s.Attempt || r.Attempt == s.Attempt && r.Iteration < s.Iteration) {
						out = append(out, r)
					}
				}
				return out
			}
			if withSum {
				fp, all := build(func(_ int, d ecoSession) string { return d.s.Prompt })
				r := measure(f, plan, rs, introduced, firsts, fp, all, sumTokens)
				r.Expansions, r.Summaries = expansions, end.Progress.Story.Summaries
				fr.Strategies[stratSummarizer] = r
				continue
			}
			fp, all := build(func(_ int, d ecoSession) string { return d.s.Prompt })
			r := measure(f, plan, rs, introduced, firsts, fp, all, 0)
			r.Expansions = expansions
			fr.Strategies[stratStory] = r
			fp, all = build(func(_ int, d ecoSession) string { return stripStory(d.s.Prompt) })
			r = measure(f, plan, rs, introduced, firsts, fp, all, 0)
			r.MaxLevel1, r.MaxLevel2, r.FullFrom, r.Lost = 0, 0, 0, nil
			fr.Strategies[stratSignpost] = r
			for _, v := range []struct {
				name   string
				latest bool
			}{{stratFollowed, false}, {stratLatest, true}} {
				fp, all = build(func(_ int, d ecoSession) string {
					return followed(t, root, end, stripStory(d.s.Prompt), d.s.Phase, v.latest)
				})
				r = measure(f, plan, rs, introduced, firsts, fp, all, 0)
				r.MaxLevel1, r.MaxLevel2, r.FullFrom, r.Lost = 0, 0, 0, nil
				fr.Strategies[v.name] = r
			}
			fp, all = build(func(i int, d ecoSession) string { return withHistory(stripStory(d.s.Prompt), before(i)) })
			r = measure(f, plan, rs, introduced, firsts, fp, all, 0)
			r.MaxLevel1, r.MaxLevel2, r.FullFrom = 0, 0, 0
			fr.Strategies[stratFull] = r
		}
		rep.Fixtures = append(rep.Fixtures, fr)
	}
	return rep
}

// PerFixture renders, per fixture and per strategy, the must-keep facts
// a later phase's prompt carried (worst phase and mean), the total
// context tokens, the largest Level 1 and Level 2 and the share of
// tokens context management (the summarizer) took; then, per fixture,
// the largest story so far against its budget and, for the stories and
// full history, which facts were lost in which phases.
func (r EconomyReport) PerFixture() string {
	var b strings.Builder
	b.WriteString("| fixture | phases | facts | strategy | retention min / mean | context tokens | L1 / L2 max | management share |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range r.Fixtures {
		for _, st := range strategies {
			s := f.Strategies[st]
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %.0f%% / %.1f%% | %d | %d / %d | %.1f%% |\n", f.Name, f.Phases, f.Facts, st,
				s.RetentionMin*100, s.RetentionMean*100, s.TotalTokens, s.MaxLevel1, s.MaxLevel2, s.SummarizerShare*100)
		}
	}
	for _, f := range r.Fixtures {
		s := f.Strategies[stratStory]
		full := "never full"
		if s.FullFrom > 0 {
			full = fmt.Sprintf("at 90%% or more from phase %d of %d", s.FullFrom, f.Phases)
		}
		fmt.Fprintf(&b, "%s: story so far at most %d of %d tokens (%s)\n", f.Name, s.MaxLevel2, story.Level2Budget, full)
		for _, st := range []string{stratStory, stratSummarizer, stratFull} {
			for _, l := range lostByFact(f.Strategies[st].Lost) {
				fmt.Fprintf(&b, "  %s lost %q in phase %s\n", st, l.fact, l.phases)
			}
		}
	}
	return b.String()
}

// lostByFact groups lost facts: each fact once, with the phases that
// lost it ("7, 8, 12").
func lostByFact(ls []LostFact) []struct{ fact, phases string } {
	var out []struct{ fact, phases string }
	idx := map[string]int{}
	for _, l := range ls {
		i, ok := idx[l.Fact]
		if !ok {
			i = len(out)
			idx[l.Fact] = i
			out = append(out, struct{ fact, phases string }{fact: l.Fact})
		}
		if out[i].phases != "" {
			out[i].phases += ", "
		}
		out[i].phases += fmt.Sprint(l.Phase)
	}
	return out
}

// Table renders the report as the README's markdown table: per strategy,
// over all fixtures.
func (r EconomyReport) Table() string {
	var b strings.Builder
	b.WriteString("| strategy | prompt tokens, phase 1 → last (mean) | slope (tokens/phase, mean) | total context tokens | retention (min / mean) | invented facts | escape hatch | summarizer share |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, st := range strategies {
		var first, last, sl, total, minRet, meanRet, share float64
		inv, exp := 0, 0
		minRet = 1
		for _, f := range r.Fixtures {
			s := f.Strategies[st]
			first += float64(s.PromptTokens[0])
			last += float64(s.PromptTokens[len(s.PromptTokens)-1])
			sl += s.Slope
			total += float64(s.TotalTokens)
			minRet = min(minRet, s.RetentionMin)
			meanRet += s.RetentionMean
			inv += s.Invented
			exp += s.Expansions
			share += s.SummarizerShare
		}
		n := float64(len(r.Fixtures))
		fmt.Fprintf(&b, "| %s | %.0f → %.0f | %.1f | %.0f | %.0f%% / %.0f%% | %d | %d | %.1f%% |\n", st, first/n, last/n, sl/n, total,
			minRet*100, meanRet/n*100, inv, exp, share/n*100)
	}
	return b.String()
}

// BenchmarkContextEconomy plays the fixtures and reports what each
// strategy gives later phases. The JSON report goes to the benchmark's
// temp dir, or to testdata/context-economy.json with
// GAFFER_UPDATE_BASELINE=1.
//
// With GAFFER_CONTEXT_FIXTURES=DIR it also plays the fixtures of DIR (the
// same format; the baseline is written from the committed ones only),
// and logs retention per fixture and per strategy.
func BenchmarkContextEconomy(b *testing.B) {
	fixtures := loadFixtures(b)
	own := len(fixtures)
	if dir := os.Getenv(ecoFixturesEnv); dir != "" {
		fixtures = append(fixtures, loadFixturesFrom(b, dir, 1)...)
	}
	var rep EconomyReport
	for b.Loop() {
		rep = economy(b, fixtures)
	}
	// On stdout: b.Logf cuts a benchmark's log at a few lines.
	fmt.Printf("retention per fixture and strategy:\n%s", rep.PerFixture())
	base := rep
	base.Fixtures = rep.Fixtures[:own]
	report := rep
	out := filepath.Join(b.TempDir(), "context-economy.json")
	if os.Getenv(ecoUpdateEnv) == "1" {
		out, report = ecoBaseline, base
	}
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, st := range strategies {
		var tokens, ret float64
		for _, f := range rep.Fixtures {
			s := f.Strategies[st]
			tokens += float64(s.TotalTokens)
			ret += s.RetentionMean
		}
		b.ReportMetric(tokens/float64(len(rep.Fixtures)), st+"-tokens/fixture")
		b.ReportMetric(ret/float64(len(rep.Fixtures))*100, st+"-retention-%")
	}
	b.Logf("report: %s\n%s", out, rep.Table())
}

// The Task Story's targets beyond the baseline's bands (README, "Context
// between agents").
//
// Bounded: a story's size follows the facts still live and what the
// agents stated, not the number of phases as such —
// TestStoryFlatOverLongRun shows it growing by a fraction of full
// history's growth from phase 12 to 24 — and never exceeds the Level 1
// and Level 2 budgets (the hard cap). On the fixtures, where nearly every
// phase adds a must-keep fact, it therefore still grows, by at most
// maxSlopeShare of full history's slope.
//
// Tokens: signposting keeps none of the must-keep facts, so any story
// costs more than it; the honest bound is that the Task Story costs at
// most maxOverSignposting times signposting's tokens on every fixture
// (measured 1.27–1.66×, 1.51× over all fixtures since the story keeps
// reasons, summaries and recommendations: the extra tokens are the
// facts themselves). At equal retention it costs less than following the
// signposts, even reading only the latest summary.md (which costs
// 1.19–1.25× the Task Story's tokens; TestContextEconomyBaseline).
const (
	maxSlopeShare      = 0.5
	maxOverSignposting = 1.75
)

// Under budget pressure (a fixture marked pressure: the story so far is
// full before the halfway phase) the Task Story must keep at least this
// share of the must-keep facts at every phase, and this share on
// average over the phases (issue 33).
const (
	minPressureRetention = 0.95
	minPressureMean      = 0.98
)

// TestContextEconomyBaseline plays the benchmark's fixtures and checks the
// committed baseline with one-sided bands — a strategy's total context
// tokens may exceed the baseline's by 10%, its retention may not drop —
// and the Task Story's targets: every must-keep fact kept on every
// fixture (at least 95% at worst and 98% on average on the pressure
// fixtures, whose story so far must be full before the halfway phase),
// within the Level 1 and Level 2 budgets, nothing invented, nothing
// superseded in a later prompt, prompt tokens growing at most
// maxSlopeShare as fast as full history's and fewer in all, total tokens
// at most maxOverSignposting times signposting's (but on the pressure
// fixtures), and fewer than following the signposts gives at the same
// retention.
func TestContextEconomyBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 24 scripted runs")
	}
	// Each fixture plays in its own repository: they run side by side.
	fixtures := loadFixtures(t)
	got := EconomyReport{Fixtures: make([]FixtureResult, len(fixtures))}
	t.Run("play", func(t *testing.T) {
		for i, f := range fixtures {
			t.Run(f.Name, func(t *testing.T) {
				t.Parallel()
				got.Fixtures[i] = economy(t, []ecoFixture{f}).Fixtures[0]
			})
		}
	})
	if t.Failed() {
		return
	}
	data, err := os.ReadFile(ecoBaseline)
	if err != nil {
		t.Fatalf("%v (write it with %s=1 go test -run '^$' -bench BenchmarkContextEconomy -benchtime 1x ./nodes)", err, ecoUpdateEnv)
	}
	var base EconomyReport
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	baseBy := map[string]FixtureResult{}
	for _, f := range base.Fixtures {
		baseBy[f.Name] = f
	}
	for _, f := range got.Fixtures {
		bf, ok := baseBy[f.Name]
		if !ok {
			t.Errorf("fixture %s is not in the baseline; update it", f.Name)
			continue
		}
		for _, st := range strategies {
			g, b := f.Strategies[st], bf.Strategies[st]
			if limit := float64(b.TotalTokens) * 1.10; float64(g.TotalTokens) > limit {
				t.Errorf("%s/%s: %d context tokens, over the baseline %d + 10%%", f.Name, st, g.TotalTokens, b.TotalTokens)
			}
			if g.RetentionMin < b.RetentionMin || g.RetentionMean < b.RetentionMean {
				t.Errorf("%s/%s: retention %.3f/%.3f dropped below the baseline %.3f/%.3f", f.Name, st, g.RetentionMin, g.RetentionMean, b.RetentionMin, b.RetentionMean)
			}
		}
		for _, st := range []string{stratStory, stratSummarizer} {
			s := f.Strategies[st]
			switch {
			case !f.Pressure && s.RetentionMin != 1:
				t.Errorf("%s/%s keeps %.0f%% of the must-keep facts at worst, want 100%%", f.Name, st, s.RetentionMin*100)
			case f.Pressure && (s.RetentionMin < minPressureRetention || s.RetentionMean < minPressureMean):
				t.Errorf("%s/%s keeps %.1f%% of the must-keep facts at worst, %.1f%% on average; want %.0f%% and %.0f%% under budget pressure (lost: %v)",
					f.Name, st, s.RetentionMin*100, s.RetentionMean*100, minPressureRetention*100, minPressureMean*100, s.Lost)
			}
			if s.Invented != 0 {
				t.Errorf("%s/%s: %d invented facts", f.Name, st, s.Invented)
			}
			if s.MaxLevel1 > story.Level1Budget || s.MaxLevel2 > story.Level2Budget {
				t.Errorf("%s/%s: Level 1 %d tokens, Level 2 %d: over budget", f.Name, st, s.MaxLevel1, s.MaxLevel2)
			}
			if s.Stale != 0 {
				t.Errorf("%s/%s: %d superseded facts still in a prompt after the phase that superseded them", f.Name, st, s.Stale)
			}
		}
		s, full, sign := f.Strategies[stratStory], f.Strategies[stratFull], f.Strategies[stratSignpost]
		if s.Slope > full.Slope*maxSlopeShare || s.TotalTokens >= full.TotalTokens {
			t.Errorf("%s: the Task Story grows %.1f tokens/phase (%d in all), full history %.1f (%d): want at most %.0f%% of its slope", f.Name, s.Slope, s.TotalTokens, full.Slope, full.TotalTokens, maxSlopeShare*100)
		}
		// At equal retention: following the signposts costs more, even
		// when the agent reads only the latest summary.md. Without
		// pressure it reaches every fact too; under pressure the latest
		// summary holds only the story so far, shed as the prompt's.
		for _, st := range []string{stratFollowed, stratLatest} {
			fo := f.Strategies[st]
			if !f.Pressure && fo.RetentionMin != 1 {
				t.Errorf("%s: %s keeps %.0f%% at worst, want 100%%", f.Name, st, fo.RetentionMin*100)
			}
			if fo.RetentionMean >= s.RetentionMean && s.TotalTokens >= fo.TotalTokens {
				t.Errorf("%s: %s keeps %.1f%% in %d tokens; the Task Story %.1f%% in %d: want the Task Story cheaper at equal retention", f.Name, st, fo.RetentionMean*100, fo.TotalTokens, s.RetentionMean*100, s.TotalTokens)
			}
		}
		if f.Pressure {
			// The story is full early, so it costs what the facts and the
			// budget cost, not a ratio of the bare prompt's tokens.
			if s.FullFrom == 0 || 2*s.FullFrom >= f.Phases {
				t.Errorf("%s: the story so far is full from phase %d of %d (0: never); a pressure fixture must fill it before the halfway phase", f.Name, s.FullFrom, f.Phases)
			}
			continue
		}
		if r := float64(s.TotalTokens) / float64(sign.TotalTokens); r > maxOverSignposting {
			t.Errorf("%s: the Task Story costs %.2f× signposting's tokens (%d vs %d), over %.2f×", f.Name, r, s.TotalTokens, sign.TotalTokens, maxOverSignposting)
		}
	}
}
