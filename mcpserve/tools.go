package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
)

// The tools' inputs.
type (
	runInput struct {
		RunID string `json:"run_id" jsonschema:"the run's id, as runs_list and run_start give it"`
	}
	planInput struct {
		Plan  string `json:"plan" jsonschema:"the plan's markdown: ### Task ID: title headings, with type, depends on and files bullet lines"`
		NoTDD bool   `json:"no_tdd,omitempty" jsonschema:"do not require a test task before every impl task"`
	}
	listInput struct {
		Limit  int    `json:"limit,omitempty" jsonschema:"the most runs to return, newest first (default 50)"`
		Status string `json:"status,omitempty" jsonschema:"only runs with this status: running, awaiting_approval, completed, failed, halted, rejected, cancelled"`
	}
	startInput struct {
		Plan        string `json:"plan,omitempty" jsonschema:"the plan's markdown (give plan or goal)"`
		Goal        string `json:"goal,omitempty" jsonschema:"what to build: the architect writes the plan (give plan or goal)"`
		Profile     string `json:"profile,omitempty" jsonschema:"the profile of gaffer.yaml (default: the configuration's)"`
		Driver      string `json:"driver,omitempty" jsonschema:"every agent's driver: script, llm or cli (default: the profile's)"`
		Model       string `json:"model,omitempty" jsonschema:"every agent's model (default: the profile's)"`
		Script      string `json:"script,omitempty" jsonschema:"the script driver's file"`
		AutoApprove bool   `json:"auto_approve,omitempty" jsonschema:"run the plan without waiting for its approval"`
		TrackerID   string `json:"tracker_id,omitempty" jsonschema:"an issue key for the execution directory's name"`
		Parallel    int    `json:"parallel,omitempty" jsonschema:"how many lanes of a phase run at once (1: one after another; default: the profile's)"`
	}
	answerInput struct {
		RunID    string `json:"run_id" jsonschema:"the run's id"`
		Feedback string `json:"feedback,omitempty" jsonschema:"notes kept with the approval"`
	}
	rejectInput struct {
		RunID    string `json:"run_id" jsonschema:"the run's id"`
		Feedback string `json:"feedback,omitempty" jsonschema:"what the architect should change; without it the run ends"`
	}
	decideInput struct {
		RunID    string `json:"run_id" jsonschema:"the run's id"`
		Decision string `json:"decision" jsonschema:"retry (another attempt of the phase, feedback as its guidance), stop (the run ends) or skip (the phase is skipped and the run goes on; only where the question offers it: the Doctor proposed skip_phase)"`
		Feedback string `json:"feedback,omitempty" jsonschema:"guidance for the retry"`
	}
	phaseTextInput struct {
		RunID    string `json:"run_id" jsonschema:"the run's id"`
		Phase    int    `json:"phase,omitempty" jsonschema:"one phase (1-based); without it, every phase"`
		MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"the most bytes to return (default 65536, at most 1048576); longer text is cut and says so"`
	}
	mergeInput struct {
		RunID  string `json:"run_id" jsonschema:"the run's id"`
		DryRun *bool  `json:"dry_run,omitempty" jsonschema:"say what the merge would do and change nothing (default true); false merges"`
	}
	waitInput struct {
		RunID          string `json:"run_id" jsonschema:"the run's id"`
		TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"return after this long even if the run goes on (default 600, at most 3600)"`
	}
)

// The tools' outputs.
type (
	// RunList is runs_list's answer.
	RunList struct {
		Runs  []runview.Run `json:"runs"`
		Total int           `json:"total" jsonschema:"how many runs the store has (with the status asked for)"`
	}
	// Answered is what run_approve, run_reject, run_answer and
	// run_cancel did.
	Answered struct {
		RunID   string   `json:"run_id"`
		Outcome string   `json:"outcome" jsonschema:"what happened: completed, interrupted, halted, stopped, handed_on, …"`
		Message string   `json:"message,omitempty"`
		Notes   []string `json:"notes,omitempty"`
		Status  string   `json:"status,omitempty" jsonschema:"the run's status when the tool returned"`
		// Verdict is, in run_wait's answer, what the user answered when
		// asked inline (elicitation): approve or reject.
		Verdict string `json:"verdict,omitempty" jsonschema:"run_wait: what the user answered when asked inline, approve or reject"`
	}
	// Merged is what run_merge did, or would do.
	Merged struct {
		RunID  string `json:"run_id"`
		DryRun bool   `json:"dry_run"`
		Text   string `json:"text"`
	}
	// Waited is run_wait's answer: the run when the wait ended, and why.
	Waited struct {
		Reason string      `json:"reason" jsonschema:"needs_human (a plan to approve or a question to answer), ended, stopped (no process runs it) or timeout"`
		Run    runview.Run `json:"run"`
		// UserAnswers are the plans the user approved or rejected when
		// run_wait asked them inline (a client with elicitation), in order.
		UserAnswers []Answered `json:"user_answers,omitempty" jsonschema:"the plan approvals the user gave when asked inline during the wait, in order"`
	}
)

// Tool annotations: every hint set as it is.
func hints(title string, readOnly, destructive, idempotent, openWorld bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &openWorld}
}

// addTools adds every tool, each with an input schema and an output
// schema (run_status's is runview.Run's).
func (s *Server) addTools() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	add(addTool(s, &mcp.Tool{Name: "plan_validate", Annotations: hints("Check a plan", true, false, true, false),
		Description: "Parse and check a gaffer plan (markdown): its phases, each phase's lanes (tasks one agent session does; lanes run at once) and tasks, and every problem with its line. Changes nothing."}, s.planValidate))
	add(addTool(s, &mcp.Tool{Name: "runs_list", Annotations: hints("List runs", true, false, true, false),
		Description: "The store's runs, newest first: status, goal, phase, cost, branch."}, s.runsList))
	add(addTool(s, &mcp.Tool{Name: "run_status", Annotations: hints("A run's status", true, false, true, false),
		Description: "One run's whole view: status, phases with their reviews, cost, errors, the question it waits on, its branch."}, s.runStatus))
	add(addTool(s, &mcp.Tool{Name: "run_start", Annotations: hints("Start a run", false, false, false, true),
		Description: "Start a run from a plan or a goal. It is queued in the running gaffer serve, or driven by a detached gaffer process: it outlives this server. " +
			"Without auto_approve it waits for run_approve once its plan is written. Returns the run id, its branch and work tree."}, s.runStart))
	add(addTool(s, &mcp.Tool{Name: "run_approve", Annotations: hints("Approve a run's plan", false, false, false, true),
		Description: "Approve the plan of a run awaiting approval: its phases run, each committed on the run's own branch (the user's checkout is not touched)."}, s.runApprove))
	add(addTool(s, &mcp.Tool{Name: "run_reject", Annotations: hints("Reject a run's plan", false, true, false, true),
		Description: "Reject the plan of a run awaiting approval: with feedback the architect writes a new plan; without it the run ends, rejected."}, s.runReject))
	add(addTool(s, &mcp.Tool{Name: "run_answer", Annotations: hints("Answer recovery's question", false, true, false, true),
		Description: "Answer the question recovery asks of a stuck phase: retry (another attempt, with feedback as guidance), stop (the run ends), or skip where the Doctor proposed skipping the phase (its work is thrown away, the run goes on with the next phase)."}, s.runAnswer))
	add(addTool(s, &mcp.Tool{Name: "run_cancel", Annotations: hints("Cancel a run", false, true, true, false),
		Description: "Cancel an unfinished run for good: it cannot be resumed. Its committed phases stay on its branch."}, s.runCancel))
	add(addTool(s, &mcp.Tool{Name: "run_logs", Annotations: hints("A run's agent sessions", true, false, true, false),
		Description: "The agents' sessions of a run (messages, tool calls and results, reports), bounded: a cut says so."}, s.runLogs))
	add(addTool(s, &mcp.Tool{Name: "run_diff", Annotations: hints("A run's diff", true, false, true, false),
		Description: "The unified diff a run committed (one phase, or every phase), without the execution directory, bounded: a cut says so."}, s.runDiff))
	add(addTool(s, &mcp.Tool{Name: "run_merge", Annotations: hints("Merge a run's branch", false, true, true, false),
		Description: "Take a finished run's branch into the user's current branch (fast-forward or one merge commit). dry_run defaults to true: it says what it would do and changes nothing."}, s.runMerge))
	add(addTool(s, &mcp.Tool{Name: "run_wait", Annotations: hints("Wait for a run", false, true, false, false),
		Description: "Wait until a run needs a human (its plan, or recovery's question) or ends, with progress notifications as its phases move. Returns the run's view and why the wait ended. Where the client supports elicitation, a plan awaiting approval is shown to the user, who approves or rejects it inline (user_answers says what they answered): so it may approve or reject, though only on the user's own answer, and says it is not read-only."}, s.runWait))
	return errors.Join(errs...)
}

// addTool adds t with h, its schemas inferred from In and Out (schemaOf).
func addTool[In, Out any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) error {
	in, err := schemaOf[In]()
	if err != nil {
		return fmt.Errorf("mcpserve: %s's input schema: %w", t.Name, err)
	}
	out, err := schemaOf[Out]()
	if err != nil {
		return fmt.Errorf("mcpserve: %s's output schema: %w", t.Name, err)
	}
	t.InputSchema, t.OutputSchema = in, out
	mcp.AddTool(s.mcp, t, h)
	return nil
}

func (s *Server) planValidate(_ context.Context, _ *mcp.CallToolRequest, in planInput) (*mcp.CallToolResult, PlanCheck, error) {
	return nil, checkPlan(in.Plan, in.NoTDD), nil
}

// runsListLimit is runs_list's default limit.
const runsListLimit = 50

func (s *Server) runsList(ctx context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, RunList, error) {
	es, err := s.cfg.Backend.List(ctx)
	if err != nil {
		return nil, RunList{}, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = runsListLimit
	}
	out := RunList{Runs: []runview.Run{}}
	for i := range es {
		if in.Status != "" && es[i].Status != in.Status {
			continue
		}
		out.Total++
		if len(out.Runs) < limit {
			out.Runs = append(out.Runs, runview.RowOfEntry(&es[i]))
		}
	}
	return nil, out, nil
}

func (s *Server) runStatus(ctx context.Context, _ *mcp.CallToolRequest, in runInput) (*mcp.CallToolResult, runview.Run, error) {
	v, err := s.view(ctx, in.RunID)
	return nil, v, err
}

// view is the view of run id now, without its plan (the plan resource
// has it).
func (s *Server) view(ctx context.Context, id string) (runview.Run, error) {
	v, _, err := s.viewOf(ctx, id)
	return v, err
}

// viewOf is view with the run's status as the host said it.
func (s *Server) viewOf(ctx context.Context, id string) (runview.Run, host.RunStatus, error) {
	if err := checkRunID(id); err != nil {
		return runview.Run{}, host.RunStatus{}, err
	}
	rs, err := s.cfg.Backend.Status(ctx, id)
	if err != nil {
		return runview.Run{}, rs, err
	}
	return runview.RunOf(rs, time.Now()), rs, nil
}

// checkRunID refuses a call that names no run, or a run id that is
// none.
func checkRunID(id string) error {
	if strings.TrimSpace(id) == "" {
		return errNoRunID
	}
	return host.CheckRunID(id)
}

func (s *Server) runStart(ctx context.Context, _ *mcp.CallToolRequest, in startInput) (*mcp.CallToolResult, Started, error) {
	switch {
	case in.Plan == "" && in.Goal == "":
		return nil, Started{}, errors.New("give plan (the plan's markdown) or goal (what to build)")
	case in.Plan != "" && in.Goal != "":
		return nil, Started{}, errors.New("give plan or goal, not both")
	}
	if in.Parallel < 0 {
		return nil, Started{}, fmt.Errorf("parallel %d: want 1 or more (1 runs a phase's lanes one after another), or leave it out", in.Parallel)
	}
	if in.Plan != "" {
		// Its size and its shape are checked before anything starts; the
		// TDD check is the run's profile's to make.
		if c := checkPlan(in.Plan, true); !c.Valid {
			return nil, Started{}, planProblems(c)
		}
	}
	st, err := s.cfg.Backend.Start(ctx, StartRequest(in))
	return nil, st, err
}

// planProblems is the error of a plan that does not check: every problem,
// one a line.
func planProblems(c PlanCheck) error {
	lines := make([]string, 0, len(c.Problems))
	for _, p := range c.Problems {
		lines = append(lines, "  "+p.String())
	}
	return fmt.Errorf("the plan is invalid (plan_validate shows it):\n%s", strings.Join(lines, "\n"))
}

func (s *Server) answer(ctx context.Context, req host.AnswerRequest) (*mcp.CallToolResult, Answered, error) {
	if err := checkRunID(req.RunID); err != nil {
		return nil, Answered{}, err
	}
	out, err := s.cfg.Backend.Answer(ctx, req)
	if err != nil {
		return nil, Answered{}, err
	}
	return nil, s.answered(ctx, out), nil
}

// answered is out told to the model, with the run's status now.
func (s *Server) answered(ctx context.Context, out host.Outcome) Answered {
	a := Answered{RunID: out.RunID, Outcome: string(out.Kind), Message: out.Message, Notes: out.Notes}
	if rs, err := s.cfg.Backend.Status(ctx, out.RunID); err == nil {
		a.Status = rs.Status
	}
	return a
}

func (s *Server) runApprove(ctx context.Context, _ *mcp.CallToolRequest, in answerInput) (*mcp.CallToolResult, Answered, error) {
	return s.answer(ctx, host.AnswerRequest{RunID: in.RunID, Verdict: host.Approve, Feedback: in.Feedback})
}

func (s *Server) runReject(ctx context.Context, _ *mcp.CallToolRequest, in rejectInput) (*mcp.CallToolResult, Answered, error) {
	return s.answer(ctx, host.AnswerRequest{RunID: in.RunID, Verdict: host.Reject, Feedback: in.Feedback})
}

func (s *Server) runAnswer(ctx context.Context, _ *mcp.CallToolRequest, in decideInput) (*mcp.CallToolResult, Answered, error) {
	v, err := host.ParseVerdict(in.Decision)
	if err != nil || !v.Decides() {
		return nil, Answered{}, fmt.Errorf("decision %q: want retry, stop or skip (run_approve and run_reject answer a plan)", in.Decision)
	}
	return s.answer(ctx, host.AnswerRequest{RunID: in.RunID, Verdict: v, Feedback: in.Feedback})
}

func (s *Server) runCancel(ctx context.Context, _ *mcp.CallToolRequest, in runInput) (*mcp.CallToolResult, Answered, error) {
	if err := checkRunID(in.RunID); err != nil {
		return nil, Answered{}, err
	}
	out, err := s.cfg.Backend.Cancel(ctx, in.RunID)
	if err != nil {
		return nil, Answered{}, err
	}
	if out.RunID == "" {
		out.RunID = in.RunID
	}
	return nil, s.answered(ctx, out), nil
}

func (s *Server) runLogs(ctx context.Context, _ *mcp.CallToolRequest, in phaseTextInput) (*mcp.CallToolResult, Bounded, error) {
	if err := checkRunID(in.RunID); err != nil {
		return nil, Bounded{}, err
	}
	if in.Phase < 0 {
		return nil, Bounded{}, fmt.Errorf("phase %d: want 1 or more, or 0 for the architect's sessions; leave it out for every phase", in.Phase)
	}
	phase := in.Phase
	if phase == 0 {
		phase = -1
	}
	w := &capped{max: byteBound(in.MaxBytes)}
	if err := s.cfg.Backend.Logs(ctx, in.RunID, phase, w); err != nil {
		return nil, Bounded{}, err
	}
	return nil, w.bounded(), nil
}

func (s *Server) runDiff(ctx context.Context, _ *mcp.CallToolRequest, in phaseTextInput) (*mcp.CallToolResult, Bounded, error) {
	if err := checkRunID(in.RunID); err != nil {
		return nil, Bounded{}, err
	}
	if in.Phase < 0 {
		return nil, Bounded{}, fmt.Errorf("phase %d: want 1 or more; leave it out for every phase", in.Phase)
	}
	w := &capped{max: byteBound(in.MaxBytes)}
	if err := s.cfg.Backend.Diff(ctx, in.RunID, in.Phase, w); err != nil {
		return nil, Bounded{}, err
	}
	return nil, w.bounded(), nil
}

func (s *Server) runMerge(ctx context.Context, _ *mcp.CallToolRequest, in mergeInput) (*mcp.CallToolResult, Merged, error) {
	if err := checkRunID(in.RunID); err != nil {
		return nil, Merged{}, err
	}
	dry := in.DryRun == nil || *in.DryRun
	var b strings.Builder
	if err := s.cfg.Backend.Merge(ctx, in.RunID, dry, &b); err != nil {
		return nil, Merged{}, err
	}
	return nil, Merged{RunID: in.RunID, DryRun: dry, Text: strings.TrimSpace(b.String())}, nil
}
