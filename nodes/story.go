package nodes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
	"github.com/gaffer-dev/gaffer/workspace"
)

// The Task Story's files (seed 004; see doc.go, "The Task Story"): one
// decision record per developer session in the execution directory's
// story/, written after the session and committed with the phase; the
// state keeps only how many there are and the latest one's hash.

// storyDir is the execution directory's story/ (slash path).
func storyDir(s state.ExecutionState) string { return path.Join(s.Run.ExecDir, "story") }

// storySection heads the story so far in phase-N/summary.md.
const storySection = "## Story so far"

// writeStoryRecord writes the record of a session whose report carries a
// story or a summary, as number Records+1, and returns s with the
// counters advanced. A summary alone is a record too: what a session
// said it did is where a fact stated in passing lives.
func (w *workflow) writeStoryRecord(s state.ExecutionState, sess agent.Session, rep agent.Report) (state.ExecutionState, error) {
	if rep.Story.IsZero() && strings.TrimSpace(rep.Summary) == "" {
		return s, nil
	}
	return w.putStoryRecord(s, story.Record{Seq: s.Progress.Story.Records + 1, Role: string(sess.Role), Phase: sess.Phase, Attempt: sess.Attempt,
		Iteration: sess.Iteration, Summary: rep.Summary, Facts: rep.Story})
}

// putStoryRecord writes r (numbered Records+1) and returns s with the
// counters advanced. The file's name depends only on that number, the
// role, the phase and the attempt, and files numbered from it on are
// removed first, so a node run again after a crash (its checkpoint lost)
// rewrites the same record instead of adding a second one.
func (w *workflow) putStoryRecord(s state.ExecutionState, r story.Record) (state.ExecutionState, error) {
	data, err := r.Encode()
	if err != nil {
		return s, fmt.Errorf("nodes: story: %w", err)
	}
	if err := w.removeStoryFrom(s, r.Seq); err != nil {
		return s, err
	}
	if err := w.write(s, path.Join(storyDir(s), r.Name()), string(data)); err != nil {
		return s, err
	}
	c := s
	c.Progress.Story.Records, c.Progress.Story.Latest = r.Seq, story.Hash(data)
	return c, nil
}

// reviewRecord is what review rr of phase ps said, as a reviewer's
// record (issue 33: a reviewer's "rejected because X, do Y instead"
// reached the retry's prompt and no later phase): the verdict and the
// comments as its summary, the items to implement as recommendations.
// A deferred or rejected item is not acted on (review-feedback.md keeps
// it): in the story it would reach the retry's prompt as work to do. An
// approval with no items and a comment of three words or fewer ("LGTM")
// says nothing a later phase needs: no record.
func reviewRecord(s state.ExecutionState, ps state.PhaseState, rr state.ReviewResult) (story.Record, bool) {
	comments := strings.TrimSpace(rr.Comments)
	if rr.Approved && len(rr.Items) == 0 && len(strings.Fields(comments)) <= 3 {
		return story.Record{}, false
	}
	verdict := "rejected"
	if rr.Approved {
		verdict = "approved"
	}
	r := story.Record{Seq: s.Progress.Story.Records + 1, Role: story.RoleReviewer, Phase: ps.Index + 1, Attempt: ps.Attempt,
		Iteration: ps.ReviewIteration() + 1, Summary: strings.TrimSpace(verdict + ": " + comments)}
	for _, it := range rr.Items {
		text := strings.TrimSpace(it.Text)
		if text == "" {
			continue
		}
		if it.Verdict == state.VerdictImplement || it.Verdict == "" {
			r.Recommendations = append(r.Recommendations, text)
		}
	}
	return r, true
}

// writeReviewRecord writes the reviewer's record of review rr of the
// current phase (reviewRecord), when it has something to say; review
// calls it once the reviewer answered, before the phase is committed or
// retried, so the record goes with the phase like a developer's.
func (w *workflow) writeReviewRecord(s state.ExecutionState, ps state.PhaseState, rr state.ReviewResult) (state.ExecutionState, error) {
	r, ok := reviewRecord(s, ps, rr)
	if !ok {
		return s, nil
	}
	return w.putStoryRecord(s, r)
}

// adoptReviewRecord counts the reviewer's record of phase ps that a
// crash left uncounted: review wrote it and committed the phase, and the
// checkpoint was lost. The adopted commit holds the file; without this
// the next record would take its number and remove it.
func (w *workflow) adoptReviewRecord(s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	seq := s.Progress.Story.Records + 1
	names, err := w.storyFiles(s)
	if err != nil {
		return s, err
	}
	for _, n := range names {
		var k int
		if _, err := fmt.Sscanf(n, "%d-", &k); err != nil || k != seq {
			continue
		}
		data, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(storyDir(s)), n))
		if err != nil {
			return s, fmt.Errorf("nodes: story: %w", err)
		}
		r, err := story.Decode(data)
		if err != nil || r.Role != story.RoleReviewer || r.Phase != ps.Index+1 || r.Attempt != ps.Attempt {
			continue
		}
		c := s
		c.Progress.Story.Records, c.Progress.Story.Latest = r.Seq, story.Hash(data)
		return c, nil
	}
	return s, nil
}

// removeStoryFrom removes the record files numbered seq or more: debris
// of a node that was killed after writing them and before its checkpoint.
func (w *workflow) removeStoryFrom(s state.ExecutionState, seq int) error {
	repo, err := w.repo(s)
	if err != nil {
		return err
	}
	names, err := w.storyFiles(s)
	if err != nil {
		return err
	}
	for _, n := range names {
		var k int
		if _, err := fmt.Sscanf(n, "%d-", &k); err == nil && k >= seq {
			if err := os.Remove(filepath.Join(repo.Root(), filepath.FromSlash(storyDir(s)), n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("nodes: story: %w", err)
			}
		}
	}
	return nil
}

// storyFiles lists the record files' names, sorted.
func (w *workflow) storyFiles(s state.ExecutionState) ([]string, error) {
	repo, err := w.repo(s)
	if err != nil {
		return nil, err
	}
	if err := workspace.CheckBeneath(repo.Root(), storyDir(s)); err != nil {
		return nil, fmt.Errorf("nodes: story: %w", err) // an agent's link: not listed, nor removed through
	}
	entries, err := os.ReadDir(filepath.Join(repo.Root(), filepath.FromSlash(storyDir(s))))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nodes: story: %w", err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out, nil
}

// readStory reads the records the state counts (numbers 1..Records), in
// order; files numbered higher are not the run's yet and are ignored.
func (w *workflow) readStory(s state.ExecutionState) ([]story.Record, error) {
	repo, err := w.repo(s)
	if err != nil {
		return nil, err
	}
	names, err := w.storyFiles(s)
	if err != nil {
		return nil, err
	}
	var out []story.Record
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(storyDir(s)), n))
		if err != nil {
			return nil, fmt.Errorf("nodes: story: %w", err)
		}
		r, err := story.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("nodes: story %s: %w", n, err)
		}
		if r.Seq <= s.Progress.Story.Records {
			out = append(out, r)
		}
	}
	story.Sort(out)
	return out, nil
}

// split returns the records of phases before phase (1-based) and of the
// phase itself.
func split(rs []story.Record, phase int) (before, this []story.Record) {
	for _, r := range rs {
		switch {
		case r.Phase < phase:
			before = append(before, r)
		case r.Phase == phase:
			this = append(this, r)
		}
	}
	return before, this
}

// StoryContext is the Task Story text of a phase prompt: the story so far
// (Level 2, at most story.Level2Budget tokens) and this phase's own
// records across attempts and review iterations (Level 1, at most
// story.Level1Budget tokens).
type StoryContext struct {
	SoFar     string
	ThisPhase string
}

// phaseStory builds the story of the current phase's prompt: the story
// so far from the previous phase's summary.md (where the summarizer's
// text, when it was accepted, is), or computed again when that file has
// none; this phase's records at Level 1. Nothing is said twice: once the
// phase has records of its own (a retry, a later review iteration), the
// story so far is computed again without what they supersede or restate
// (story.Level2Without), and Level 1 leaves out what the story so far
// shows already (story.Level1Without).
func (w *workflow) phaseStory(s state.ExecutionState, ps state.PhaseState) (StoryContext, error) {
	rs, err := w.readStory(s)
	if err != nil || len(rs) == 0 {
		return StoryContext{}, err
	}
	before, this := split(rs, ps.Index+1)
	var sc StoryContext
	if len(before) > 0 {
		if ps.Index > 0 && len(this) == 0 {
			sc.SoFar = w.summaryStory(s, ps.Index-1)
		}
		if sc.SoFar == "" {
			if sc.SoFar, err = story.Level2Without(before, this, storyNeed(s), 0); err != nil {
				w.cfg.Logger.Warn("story so far over budget", "phase", ps.Index+1, "err", err)
			}
		}
	}
	if sc.ThisPhase, err = story.Level1Without(this, sc.SoFar, storyNeed(s), 0); err != nil {
		w.cfg.Logger.Warn("phase story over budget", "phase", ps.Index+1, "err", err)
	}
	return sc, nil
}

// storyNeed is the plan the story serves: the goal and each phase's
// tasks (titles, bodies, files). Under budget pressure the story keeps
// what a task after a unit's own phase names before routine notes
// (story.Need).
func storyNeed(s state.ExecutionState) story.Need {
	n := story.Need{Goal: s.Run.Goal}
	for _, ph := range s.Plan.Phases {
		var b strings.Builder
		for _, id := range ph.TaskIDs {
			for _, t := range s.Plan.Tasks {
				if t.ID == id {
					fmt.Fprintf(&b, "%s\n%s\n%s\n", t.Title, t.Description, strings.Join(t.Files, " "))
				}
			}
		}
		n.Phases = append(n.Phases, b.String())
	}
	return n
}

// summaryStory returns the story section of phase i's summary.md, or "".
func (w *workflow) summaryStory(s state.ExecutionState, i int) string {
	repo, err := w.repo(s)
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(summaryPath(s, i))))
	if err != nil {
		return ""
	}
	_, after, ok := strings.Cut(string(data), "\n"+storySection)
	if !ok {
		return ""
	}
	return storySection + after
}

// storySoFar is the Level 2 story of the records up to and including
// phase i (0-based) for its summary.md: the summarizer's text when there
// is a summarizer and story.CheckSummary accepts it, else the
// deterministic compression. The summarizer's usage is its own role's.
func (w *workflow) storySoFar(ctx context.Context, s state.ExecutionState, i int) (state.ExecutionState, string, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, "", err
	}
	rs, err := w.readStory(s)
	if err != nil || len(rs) == 0 {
		return s, "", err
	}
	upto, this := split(rs, i+2)
	if len(upto) == 0 {
		return s, "", nil
	}
	_, this = split(this, i+1)
	text, err := story.Level2(upto, storyNeed(s), 0)
	if err != nil {
		w.cfg.Logger.Warn("story so far over budget", "phase", i+1, "err", err)
	}
	if s.Config.Agents.Summarizer.Driver == "" {
		return s, text, nil
	}
	d, err := w.cfg.Drivers(agent.RoleSummarizer, s.Config)
	if err != nil {
		return s, "", fmt.Errorf("nodes: summarizer driver: %w", err)
	}
	if d == nil {
		return s, text, nil
	}
	rep, err := w.session(ctx, d, agent.Session{Role: agent.RoleSummarizer, RunID: s.Run.ID, Phase: i + 1, Attempt: 1, Iteration: 1,
		Prompt: SummarizerPrompt(text, this), Dir: repo.Root(), Tools: []string{agent.ToolRead}})
	if err != nil {
		if ctx.Err() != nil {
			return s, "", err
		}
		w.cfg.Logger.Warn("summarizer could not run; the deterministic story is used", "phase", i+1, "err", err)
		return w.usage(ctx, s, agent.RoleSummarizer, rep.Usage), text, nil
	}
	c := w.usage(ctx, s, agent.RoleSummarizer, rep.Usage)
	w.checkContextCost(ctx, c, i+1)
	out := strings.TrimSpace(rep.Output) + "\n"
	if !strings.HasPrefix(out, storySection) {
		out = storySection + "\n\n" + out
	}
	switch cerr := story.CheckSummary(out, upto, story.Level2Budget); {
	case rep.Status == agent.StatusFailed:
		w.cfg.Logger.Warn("summarizer failed; the deterministic story is used", "phase", i+1, "err", rep.Error)
	case cerr != nil:
		w.cfg.Logger.Warn("summary rejected; the deterministic story is used", "phase", i+1, "err", cerr)
	default:
		c.Progress.Story.Summaries++
		return c, out, nil
	}
	return c, text, nil
}

// checkContextCost emits EventContextCost when the summarizer's share of
// the run's cost (tokens when no cost is known) is over
// events.ContextCostLimit.
func (w *workflow) checkContextCost(ctx context.Context, s state.ExecutionState, phase int) {
	share := ContextShare(s)
	if share > events.ContextCostLimit {
		w.cfg.Logger.Warn("context management is over its share of the run's cost", "share", share, "limit", events.ContextCostLimit)
		graph.Emit(ctx, events.EventContextCost, events.ContextCost{Phase: phase, Share: share})
	}
}

// ContextShare is the summarizer's share of the run's cost: by cost when
// any role has one, else by tokens; 0 for a run that used nothing.
func ContextShare(s state.ExecutionState) float64 {
	total, sum := s.TotalUsage(), s.Usage[string(agent.RoleSummarizer)]
	if total.CostUSD > 0 {
		return sum.CostUSD / total.CostUSD
	}
	if t := total.InputTokens + total.OutputTokens; t > 0 {
		return float64(sum.InputTokens+sum.OutputTokens) / float64(t)
	}
	return 0
}

// SummarizerPrompt asks the summarizer for a better story so far than
// the deterministic one, given it and the records of the phase just
// finished, rendered at Level 1 (with reasons and recommendations; the
// earlier phases are in the deterministic text already, and the raw JSON
// would cost about twice the tokens). The prompt does not grow with the
// run.
func SummarizerPrompt(deterministic string, rs []story.Record) string {
	this, _ := story.Level1(rs, story.Need{}, 0)
	return fmt.Sprintf(`## Summarize the Task Story

You are the summarizer. Rewrite the story so far below in at most %d tokens for the next
phase's agent: what was decided and built, not how. Keep every user requirement,
dependency, method and NOT TODO line word for word. Add nothing that is not in the
records. Reply with the markdown only, starting with "%s".

%s
## The records of the phase just finished

%s`, story.Level2Budget, storySection, deterministic, this)
}
