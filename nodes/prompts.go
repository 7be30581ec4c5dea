package nodes

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// PhasePrefix is the leading text of every phase prompt of every run: the
// same bytes each time, so a model's prompt cache is reused (seed 002's
// stable prefix). Nothing that varies may be added before it.
const PhasePrefix = `## Phased execution

You are a developer agent executing one phase of a phased development plan.
- The orchestrator commits after review: do NOT commit, amend or reset.
- Do only the tasks assigned below, in order; later phases do the rest.
- Read the code and the files named below to learn the current state: this
  prompt is a signpost, not the whole story.
- When a task cannot be done, stop and report the failure with its output.
  A test task's tests failing for the missing behaviour is its expected
  result, not a failure: do not implement around them.
- End your report with a JSON block for the agents after you (leave out what
  you have nothing for): {"decisions": [{"topic": "", "what": "", "why": ""}],
  "commands": ["TODO: ...", "NOT TODO: ..."], "methods": ["Name(signature)"],
  "dependencies": [""], "recommendations": [""]}
`

// summarySignpost points phase n (1-based, n > 1) at the earlier phases'
// summaries when its prompt carries no story.
func summarySignpost(dir string, n int) string {
	return fmt.Sprintf("- What earlier phases did: `%s/phase-<N>/summary.md` (N = 1..%d), each with the git commands that show its changes\n", dir, n-1)
}

// storySignpostLead begins the signpost of a prompt that carries the
// story.
const storySignpostLead = "- Earlier phases: the story below"

// storySignpost replaces summarySignpost when the prompt carries the
// story, which is what the summaries would tell: it points at the full
// records relative to plan.md, whose full path is the line above, so the
// execution directory's path is not spelled out again. It does not point
// at the summaries: their story is the one below, and the git commands
// they hold are what the prior-work line gives (git log, git show).
const storySignpost = storySignpostLead + "; full records in `story/*.json` beside `plan.md`\n"

// retryFraming varies the framing of a retry so a model does not repeat
// itself (seed 002's controlled variation): retry n (0 for the first
// retry) gets framing n modulo 3.
func retryFraming(n int) string {
	framings := [...]string{
		"The previous approach failed. A different strategy is needed.",
		"Review the errors carefully before proceeding differently.",
		"The prior attempt had issues. Consider an alternative approach.",
	}
	return framings[((n%len(framings))+len(framings))%len(framings)]
}

// PhasePrompt builds the developer's prompt for the current phase: the
// stable prefix, where to find context (paths, not contents), the phase's
// own plan sections (state.PhaseContext), the retry context when the phase
// was rejected before, and the assignment restated at the end. Its size
// depends on the phase and its feedback, never on how many phases ran
// before it.
func PhasePrompt(s state.ExecutionState) (string, error) {
	return PhasePromptWith(s, StoryContext{})
}

// PhasePromptWith is PhasePrompt with the Task Story: after the stable
// prefix and the signposts (which then also point at the story/ files),
// the story so far and this phase's records, each within its budget, so
// the prefix stays the same bytes and the prompt stays flat as phases
// grow.
func PhasePromptWith(s state.ExecutionState, sc StoryContext) (string, error) {
	ps, ok := current(s)
	if !ok {
		return "", ErrNoPhase
	}
	return phasePrompt(s, ps, -1, sc)
}

// LanePrompt is the prompt of lane k (0-based) of the current phase ps, a
// phase of several lanes: PhasePromptWith's, with the plan's sections of
// the lane's tasks only, a word on the other lanes that work at once, and
// for a lane run again after a conflict the paths it conflicted on.
func LanePrompt(s state.ExecutionState, ps state.PhaseState, k int, sc StoryContext) (string, error) {
	if k < 0 || k >= len(ps.Lanes) {
		return "", fmt.Errorf("%w: lane %d of phase %d", ErrNoPhase, k+1, ps.Index+1)
	}
	return phasePrompt(s, ps, k, sc)
}

// phasePrompt builds phase ps's prompt, for its lane k or (k < 0) for
// the whole phase.
func phasePrompt(s state.ExecutionState, ps state.PhaseState, k int, sc StoryContext) (string, error) {
	i := ps.Index
	ctx, err := state.PhaseContext(s.Plan, i)
	if err != nil {
		return "", fmt.Errorf("nodes: phase prompt: %w", err)
	}
	tasks, err := s.Plan.PhaseTasks(i)
	if err != nil {
		return "", fmt.Errorf("nodes: phase prompt: %w", err)
	}
	var lane state.LaneProgress
	if k >= 0 {
		lane = ps.Lanes[k]
		if tasks, ctx, err = laneTasks(s, lane, tasks); err != nil {
			return "", err
		}
	}
	n, total := i+1, len(s.Plan.Phases)
	var b strings.Builder
	b.WriteString(PhasePrefix)
	writeSignposts(&b, s.Run.ExecDir, n, sc)
	if k >= 0 {
		fmt.Fprintf(&b, "\n## Phase %d of %d, lane %d of %d: the plan's sections for it\n\n%s", n, total, k+1, len(ps.Lanes), ctx)
	} else {
		fmt.Fprintf(&b, "\n## Phase %d of %d: the plan's sections for it\n\n%s", n, total, ctx)
	}
	b.WriteString(developerTypeRules(tasks))
	switch {
	case ps.Review == nil || ps.Review.Approved:
	case k >= 0:
		b.WriteString("\n" + laneRetryContext(s, ps, lane))
	default:
		b.WriteString("\n" + retryContext(s, ps))
	}
	if len(lane.Conflict) > 0 {
		fmt.Fprintf(&b, "\n## Your lane's earlier work conflicted\n\nIt changed what the other lanes changed in %s, and could not be combined with their work. "+
			"This tree now holds their combined work: do your tasks again on top of it, keeping their changes.\n",
			"`"+strings.Join(lane.Conflict, "`, `")+"`")
	}
	b.WriteString(recoveryPrompt(s, ps))
	writeAssignment(&b, k, n, total, tasks)
	return b.String(), nil
}

// laneTasks is lane's part of its phase's tasks: its own tasks, and the
// plan's sections for them with a word on the other lanes' (lanesNote).
func laneTasks(s state.ExecutionState, lane state.LaneProgress, tasks []state.Task) ([]state.Task, string, error) {
	ctx, err := state.TasksContext(s.Plan, lane.Tasks)
	if err != nil {
		return nil, "", fmt.Errorf("nodes: lane prompt: %w", err)
	}
	var mine, others []state.Task
	for _, t := range tasks {
		if slices.Contains(lane.Tasks, t.ID) {
			mine = append(mine, t)
		} else {
			others = append(others, t)
		}
	}
	return mine, ctx + lanesNote(others), nil
}

// writeSignposts writes a phase prompt's "Where to find context": the
// plan in the execution directory dir and, for phase n after the first,
// the prior work; the Task Story (sc) when there is one, else the
// summaries.
func writeSignposts(b *strings.Builder, dir string, n int, sc StoryContext) {
	fmt.Fprintf(b, "\n## Where to find context\n\n")
	fmt.Fprintf(b, "- The full plan: `%s/plan.md`\n", dir)
	withStory := sc.SoFar != "" || sc.ThisPhase != ""
	if n > 1 {
		if !withStory {
			b.WriteString(summarySignpost(dir, n))
		}
		b.WriteString("- Prior work: `git log --oneline -10`, and `git show HEAD` for the last phase\n")
	}
	if withStory {
		b.WriteString(storySignpost)
		for _, t := range []string{sc.SoFar, sc.ThisPhase} {
			if t != "" {
				b.WriteString("\n#" + strings.TrimRight(t, "\n") + "\n")
			}
		}
	}
}

// writeAssignment writes a phase prompt's last section: the tasks of
// phase n of total, or of its lane k (k >= 0), to execute in order.
func writeAssignment(b *strings.Builder, k, n, total int, tasks []state.Task) {
	ids := make([]string, len(tasks))
	for j, t := range tasks {
		ids[j] = fmt.Sprintf("Task %s (%s)", t.ID, t.Title)
	}
	if k >= 0 {
		fmt.Fprintf(b, "\n## Your assignment\n\nExecute lane %d of phase %d of %d: %s, in this order. Do not commit; report what you did.\n",
			k+1, n, total, strings.Join(ids, "; "))
		return
	}
	fmt.Fprintf(b, "\n## Your assignment\n\nExecute phase %d of %d: %s, in this order. Do not commit; report what you did.\n",
		n, total, strings.Join(ids, "; "))
}

// lanesNote tells a lane of the phase's tasks the other lanes do at the
// same time.
func lanesNote(others []state.Task) string {
	if len(others) == 0 {
		return ""
	}
	names := make([]string, len(others))
	for i, t := range others {
		names[i] = fmt.Sprintf("Task %s (%s)", t.ID, t.Title)
	}
	return fmt.Sprintf("\nAt the same time, other sessions do this phase's %s, each in its own work tree from the same commit; "+
		"your work and theirs are combined when all are done. Do only your tasks, and keep to their files where you can: "+
		"a file another lane changes too may conflict.\n", strings.Join(names, "; "))
}

// retryContext keeps the previous attempt's errors in full and points at
// review-feedback.md.
func retryContext(s state.ExecutionState, ps state.PhaseState) string {
	var b strings.Builder
	if s.Plan.Mode == state.ModeTask {
		it := ps.ReviewIteration() + 1
		fmt.Fprintf(&b, "## Review iteration %d\n\nYour last change was reviewed and rejected. %s\n", it,
			retryFraming(it-2))
	} else {
		fmt.Fprintf(&b, "## Retry attempt %d\n\nThe previous attempt was reset to the pre-phase commit. %s\n", ps.Attempt,
			retryFraming(ps.Attempt-2))
	}
	fmt.Fprintf(&b, "\n### Previous attempt's errors and review\n\n%s\n", feedbackBody(ps, false))
	fmt.Fprintf(&b, "Full feedback: `%s`\n", feedbackPath(s, ps.Index))
	b.WriteString(keptContext(ps))
	return b.String()
}

// laneRetryContext is retryContext for a lane a rejected review runs
// again: its session goes on, its earlier work in its tree. A lane that
// recovery runs again in a fresh session starts from the pre-phase
// commit instead, the other lanes' work kept aside for the combine.
func laneRetryContext(s state.ExecutionState, ps state.PhaseState, l state.LaneProgress) string {
	var b strings.Builder
	if l.SessionID == "" {
		kept := ""
		if slices.ContainsFunc(ps.Lanes, func(o state.LaneProgress) bool { return o.Label() != l.Label() && o.Status == state.LaneDone }) {
			kept = "The phase's other lanes succeeded and keep their work, which is combined with yours when you are done. "
		}
		fmt.Fprintf(&b, "## Retry attempt %d of your lane\n\nYour lane's earlier attempts were set aside: this tree is the phase's starting commit. %s%s\n",
			l.Attempt, kept, retryFraming(l.Attempt-2))
	} else {
		fmt.Fprintf(&b, "## Review %d of the phase rejected it\n\nYour lane's earlier work is in this tree: change it as the review asks. %s\n",
			l.Iteration, retryFraming(l.Iteration-1))
	}
	fmt.Fprintf(&b, "\n### The review\n\n%s\n", feedbackBody(ps, false))
	fmt.Fprintf(&b, "Full feedback: `%s`\n", feedbackPath(s, ps.Index))
	return b.String()
}

// ArchitectPrompt asks for a plan from the goal, with the validator's
// problems or the human's feedback when this is a revision.
func ArchitectPrompt(s state.ExecutionState) string {
	var b strings.Builder
	b.WriteString(`## Planning

You are the architect. Write a plan in markdown for the goal below. Each task is a
"### Task <id>: <title>" heading, optionally followed by "- type: test|impl|refactor",
"- depends on: <ids>|none" and "- files: <paths>" lines, then its description.
Write test tasks before the impl tasks that make them pass.
Tasks whose dependencies are done run at once, each in its own fresh session and work
tree, unless their "- files:" lines overlap (or a task has none): then they run one
after another in one session. So where the work allows, give every task a "- files:"
line naming the paths it creates or changes, and keep the tasks of one layer to
disjoint files.
`)
	b.WriteString(architectTDD)
	b.WriteString("Reply with the plan only.\n")
	fmt.Fprintf(&b, "\n## Goal\n\n%s\n", s.Run.Goal)
	if p := planProblems(s); p != "" {
		fmt.Fprintf(&b, "\n## Revision %d: the validator refused your last plan\n\n%s\n", s.Progress.PlanRevision, p)
	}
	if s.Approval.Decision == state.DecisionRejected && s.Approval.Feedback != "" {
		fmt.Fprintf(&b, "\n## Revision %d: the human rejected the plan with this feedback\n\n%s\n\nThe plan they rejected:\n\n%s\n",
			s.Progress.PlanRevision, s.Approval.Feedback, s.Plan.Markdown)
	}
	fmt.Fprintf(&b, "\n## Your assignment\n\nWrite the plan for: %s\n", s.Run.Goal)
	return b.String()
}

// ReviewerPrompt asks for a JSON verdict on the phase's uncommitted changes.
func ReviewerPrompt(s state.ExecutionState) (string, error) {
	ps, ok := current(s)
	if !ok {
		return "", ErrNoPhase
	}
	ctx, err := state.PhaseContext(s.Plan, ps.Index)
	if err != nil {
		return "", fmt.Errorf("nodes: reviewer prompt: %w", err)
	}
	tasks, err := s.Plan.PhaseTasks(ps.Index)
	if err != nil {
		return "", fmt.Errorf("nodes: reviewer prompt: %w", err)
	}
	filesNote := reviewerFilesNote(CheckDeclared(tasks, slices.Sorted(maps.Keys(ps.Written))))
	if ps.Parallel() {
		// Several lanes did the phase's tasks at once: a rejection may
		// name the tasks at fault, and only their lanes run again.
		return fmt.Sprintf(`## Review

You are the reviewer. Review the uncommitted changes of phase %d (see `+"`git status`"+` and
`+"`git diff`"+`) against the plan's sections below. The phase's tasks were done at once, in lanes (%s);
their work is combined here. %s
%s%s
Reply with JSON only: {"approved": true|false, "comments": "...", "items": [{"text": "..."}], "tasks": ["..."]}
When you reject the change for some tasks only, list their ids in "tasks": only they are done again.
`, ps.Index+1, laneList(ps), reviewerTypeRules(tasks), ctx, filesNote), nil
	}
	return fmt.Sprintf(`## Review

You are the reviewer. Review the uncommitted changes of phase %d (see `+"`git status`"+` and
`+"`git diff`"+`) against the plan's sections below. %s
%s%s
Reply with JSON only: {"approved": true|false, "comments": "...", "items": [{"text": "..."}]}
`, ps.Index+1, reviewerTypeRules(tasks), ctx, filesNote), nil
}

// laneList shows a phase's lanes as "1, 2 | 3".
func laneList(ps state.PhaseState) string {
	parts := make([]string, len(ps.Lanes))
	for k, l := range ps.Lanes {
		parts[k] = strings.Join(l.Tasks, ", ")
	}
	return strings.Join(parts, " | ")
}

// EvaluatorPrompt asks the evaluator to sort review items.
func EvaluatorPrompt(r state.ReviewResult) string {
	var b strings.Builder
	b.WriteString("## Evaluate review items\n\nSort each item into IMPLEMENT (act on it now), DEFER (valid, out of scope) or REJECT (wrong).\n\n")
	for _, it := range r.Items {
		fmt.Fprintf(&b, "- %s\n", it.Text)
	}
	b.WriteString("\nReply with JSON only: {\"items\": [{\"text\": \"...\", \"disposition\": \"IMPLEMENT\", \"reason\": \"...\"}]}\n")
	return b.String()
}
