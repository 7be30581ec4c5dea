package state

import (
	"encoding/json"
	"time"
)

// ExecutionState is the whole state of one workflow run: how it was
// started, the plan, the progress through its phases, the human's answer,
// the usage and the outcome. It is a value: transitions return a changed
// copy (the With… methods) and never change the state they are given. It
// is saved as execution-state.json with Encode.
//
// A copy shares with the state it was made from every slice, map and
// pointer it did not change: WithPhaseState makes a new list of the
// phases' states holding a copy of the one phase it replaces, and shares
// the others' contents, the plan, and so on. A step's transitions thus
// cost what they change, not what the plan holds. So a transition may
// assign a copy's fields (c := s; c.Status = …; c.Progress.Phases = …)
// but must never change a shared slice's or map's elements in place
// (c.Progress.Phases[i].Status = …, c.Usage[role] = …, append to a
// slice with room to spare): that would change s too. To change
// elements in place, take Clone, a deep copy, or PhaseState, a deep copy
// of one phase's state, first.
//
// Each field is a group that changes at its own pace (Run and Config are
// fixed at start, Plan changes only when the plan is revised, Progress
// changes every step), which keeps checkpoints of unchanged groups cheap.
type ExecutionState struct {
	Run      RunInfo          `json:"run"`
	Config   RunConfig        `json:"config"`
	Plan     Plan             `json:"plan"`
	Progress Progress         `json:"progress"`
	Approval Approval         `json:"approval"`
	Usage    map[string]Usage `json:"usage,omitempty"` // by agent role: "architect", "developer", …
	Status   RunStatus        `json:"status"`
	Errors   []string         `json:"errors,omitempty"` // what went wrong, oldest first
	// Stash is the user's uncommitted changes that a run started with
	// --allow-dirty put aside before its first phase, to put back when
	// the run ends.
	Stash UserStash `json:"stash,omitzero"`
	// Outbox is what the run has to tell a person (RunConfig.Notify),
	// appended in the checkpoint of the change it tells of.
	Outbox Outbox `json:"outbox,omitzero"`
}

// UserStash is where a run keeps the user's uncommitted changes
// (workspace.Stash): recorded, with Commit, in the checkpoint before the
// work tree is cleaned for the first phase, and put back (Restored) when
// the run ends — done, halted, failed, rejected or cancelled.
type UserStash struct {
	Commit   string   `json:"commit,omitempty"`   // the stash commit; "" when there was nothing to keep
	Restored bool     `json:"restored,omitempty"` // the changes are back in the work tree and the index
	Overlap  []string `json:"overlap,omitempty"`  // paths the run changed too: the user's version is in the work tree, the run's in its commits
}

// Pending reports whether there are changes to put back.
func (u UserStash) Pending() bool { return u.Commit != "" && !u.Restored }

// RunInfo identifies a run. Everything in it is fixed when the run is
// created and never recomputed on resume, so values derived from the clock
// or randomness (the id, the date in ExecDir) stay the same.
type RunInfo struct {
	ID        string    `json:"id"`
	Goal      string    `json:"goal"`
	TrackerID string    `json:"tracker_id,omitempty"` // an issue key such as "GH-42"; may be empty
	Slug      string    `json:"slug"`                 // short directory name from the goal (Slugify)
	CreatedAt time.Time `json:"created_at"`
	// ExecDir is the execution directory, relative to the work tree and
	// slash separated: "docs/gaffer/<date>-<tracker-id>-<slug>", or
	// without a tracker id "docs/gaffer/<date>-<run-suffix>-<slug>" (see
	// NewRun, RunSuffix and ExecDir).
	ExecDir string `json:"exec_dir"`
	// WorkTree is the absolute path of the run's own git work tree (a
	// linked worktree on branch gaffer/<id>, beside the store); "" for a
	// run in place, in the user's checkout (gaffer run --in-place, and
	// every run stored before work trees existed).
	WorkTree string `json:"work_tree,omitempty"`
}

// RunConfig is how a run was started: stored with the run so that resume
// needs no flags and rebuilds the same graph and drivers. Validate fills in
// defaults and rejects nonsense.
type RunConfig struct {
	Profile    string `json:"profile,omitempty"`
	Agents     Agents `json:"agents"`
	ScriptPath string `json:"script_path,omitempty"` // for the script driver
	PlanPath   string `json:"plan_path,omitempty"`   // a plan given by the user (skips the architect)
	// Inputs are the files the run itself reads — the plan, the script,
	// the repository's gaffer.yaml — that were untracked in the work tree
	// when it started, relative to its root. They are not the user's
	// changes: a run starts with them there, never puts them aside
	// (--allow-dirty), never commits them and never resets them away.
	Inputs      []string `json:"inputs,omitempty"`
	AutoApprove bool     `json:"auto_approve,omitempty"`
	// Parallel is how many lanes of a phase run at once (gaffer.yaml's
	// parallel, run --parallel); Validate sets 0 to DefaultParallel. A
	// run stored before lanes existed has 0: ParallelOf reads it.
	Parallel   int           `json:"parallel,omitempty"`
	AllowDirty bool          `json:"allow_dirty,omitempty"` // start on a work tree with uncommitted changes
	Pace       time.Duration `json:"pace,omitempty"`        // pause between steps, for demos; 0 for none
	// SkipTDDCheck turns off the rule that every impl task has a test task
	// in its dependency chain.
	SkipTDDCheck bool `json:"skip_tdd_check,omitempty"`
	// Mode is the profile's mode: ExecAuto (empty: the plan's lines
	// decide), ExecTask or ExecPhased.
	Mode ExecMode `json:"mode,omitempty"`
	// StrictFiles makes a session's undeclared changes, or a declared
	// file it left untouched, a failed attempt (a profile's
	// strict_files: true).
	StrictFiles bool   `json:"strict_files,omitempty"`
	Limits      Limits `json:"limits"`
	// Drivers holds what the llm and cli drivers are rebuilt from on
	// resume: the effective profile's settings at start, so that later
	// edits of gaffer.yaml do not change a run. It names the API key's
	// environment variable; it never holds a key.
	Drivers DriverSettings `json:"drivers,omitzero"`
	// Recovery, when set, turns on what the workflow does when phases
	// keep failing (the Doctor, replans, the stuck handler; package
	// recovery). Nil (recovery.enabled: false) leaves the field out, and
	// a run is exactly what it was without recovery.
	Recovery *RecoveryConfig `json:"recovery,omitempty"`
	// Notify, when set, is whom the run notifies of what (gaffer.yaml's
	// notify section at start): URLs, commands and environment
	// variables' names, never a secret.
	Notify *NotifyConfig `json:"notify,omitempty"`
}

// RecoveryConfig is a run's recovery settings from its profile.
type RecoveryConfig struct {
	// Fatal lists the configured fatal categories: an attempt whose error
	// text matches Pattern (a Go regexp) is of category Name, and is
	// replanned at once.
	Fatal []FatalPattern `json:"fatal,omitempty"`
	// RecoveryTuning holds the thresholds and budgets the profile set
	// (its fields are inline in the JSON); those it left out take
	// recovery's defaults. They are the run's: resume uses them, whatever
	// gaffer.yaml says by then.
	RecoveryTuning
	// RecoveryRules holds the risk categories, the similarity switch and
	// the fatal error types the profile set (inline too), the run's as
	// the thresholds are.
	RecoveryRules
}

// FatalPattern is one configured fatal category.
type FatalPattern struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

// DriverSettings are the settings of a run's llm and cli drivers, taken
// from the effective profile when the run starts.
type DriverSettings struct {
	Provider  string `json:"provider,omitempty"`    // anthropic, openai or ollama (llm driver)
	BaseURL   string `json:"base_url,omitempty"`    // the provider's endpoint; "" for its own
	APIKeyEnv string `json:"api_key_env,omitempty"` // the variable holding the key: its name only
	// MaxTurns bounds a session's model calls (llm) or turns (cli); 0
	// takes the driver's default.
	MaxTurns int `json:"max_turns,omitempty"`
	// MaxTokensPerSession bounds a session's tokens (llm); 0 takes the
	// driver's default.
	MaxTokensPerSession int                 `json:"max_tokens_per_session,omitempty"`
	Prices              map[string]Price    `json:"prices,omitempty"`     // by model name
	CLIAgents           map[string]CLIAgent `json:"cli_agents,omitempty"` // the templates the run's cli roles name
}

// Price is what a model costs, in USD per million tokens. gaffer.yaml's
// prices and a run's settings both hold it.
type Price struct {
	Input  float64 `json:"input" yaml:"input"`   // uncached input tokens
	Output float64 `json:"output" yaml:"output"` // output tokens
	Cached float64 `json:"cached" yaml:"cached"` // input tokens read from the provider's cache
}

// Cost returns the dollars of u's tokens at price p: its input tokens
// less the cached ones at Input, the cached ones at Cached, its output
// tokens at Output.
func (p Price) Cost(u Usage) float64 {
	uncached := max(u.InputTokens-u.CachedTokens, 0)
	return (float64(uncached)*p.Input + float64(u.CachedTokens)*p.Cached + float64(u.OutputTokens)*p.Output) / 1e6
}

// CLIAgent is a CLI agent's command template (see cliagent.Template).
type CLIAgent struct {
	Command       []string          `json:"command"`
	ResumeCommand []string          `json:"resume_command,omitempty"`
	Env           map[string]string `json:"env,omitempty"` // no secrets: run refuses secret-looking names
	PassEnv       []string          `json:"pass_env,omitempty"`
	Prompt        string            `json:"prompt,omitempty"`
	Output        string            `json:"output,omitempty"`
	Writable      []string          `json:"writable,omitempty"` // paths a confined agent may write beneath besides the repository
}

// Agents names the driver and model of each agent role.
type Agents struct {
	Architect AgentConfig `json:"architect"`
	Developer AgentConfig `json:"developer"`
	Reviewer  AgentConfig `json:"reviewer"`
	Evaluator AgentConfig `json:"evaluator"`
	// Summarizer, optional, compresses the Task Story at phase
	// boundaries; without it the deterministic compression is used.
	Summarizer AgentConfig `json:"summarizer,omitzero"`
	// Doctor diagnoses failed attempts and Replanner revises a stuck
	// phase's approach (issue 11); both are set only when the run's
	// recovery is on.
	Doctor    AgentConfig `json:"doctor,omitzero"`
	Replanner AgentConfig `json:"replanner,omitzero"`
}

// Role returns the config of the role named role ("architect",
// "developer", "reviewer" or "evaluator"); any other name is the zero
// AgentConfig.
func (a Agents) Role(role string) AgentConfig {
	switch role {
	case "architect":
		return a.Architect
	case "developer":
		return a.Developer
	case "reviewer":
		return a.Reviewer
	case "evaluator":
		return a.Evaluator
	case "summarizer":
		return a.Summarizer
	case "doctor":
		return a.Doctor
	case "replanner":
		return a.Replanner
	}
	return AgentConfig{}
}

// AgentConfig is the driver ("script", "llm", "cli") and model of one
// role, and for driver cli the name of its template in
// DriverSettings.CLIAgents.
type AgentConfig struct {
	Driver string `json:"driver,omitempty"`
	Model  string `json:"model,omitempty"`
	Agent  string `json:"agent,omitempty"`
	// StrongModel is the Doctor's strong model, asked for complex
	// failures and when the cheap one is unsure.
	StrongModel string `json:"strong_model,omitempty"`
	// EscalationModel is the developer's model for a phase the stuck
	// handler escalated (that phase only).
	EscalationModel string `json:"escalation_model,omitempty"`
	// CallTimeout bounds one model call of the llm driver; 0 takes the
	// driver's default.
	CallTimeout time.Duration `json:"call_timeout,omitempty"`
	// CallAttempts is how many times the llm driver tries one model call
	// on 429, 5xx or no answer; 0 takes the driver's default.
	CallAttempts int `json:"call_attempts,omitempty"`
	// SessionTimeout bounds one session's wall time (a CLI agent's
	// process, an llm session); 0 takes the driver's default.
	SessionTimeout time.Duration `json:"session_timeout,omitempty"`
}

// Limits bound the workflow's loops. Zero means "use the default".
type Limits struct {
	// MaxTaskReviewIterations is how many times a phase may be reviewed
	// within one attempt (the same session continues). Default 5.
	MaxTaskReviewIterations int `json:"max_task_review_iterations"`
	// MaxPhaseAttempts is how many fresh attempts a phase gets, each after
	// a reset to the pre-phase commit. Default 2.
	MaxPhaseAttempts int `json:"max_phase_attempts"`
	// MaxPlanRevisions is how many times the architect may revise a plan
	// the validator rejected. Default 3.
	MaxPlanRevisions int `json:"max_plan_revisions"`
	// MaxRunCostUSD and MaxRunTokens are the run's budget, which
	// recovery's stuck handler and the 80% warning measure; 0 is none.
	MaxRunCostUSD float64 `json:"max_run_cost_usd,omitempty"`
	MaxRunTokens  int     `json:"max_run_tokens,omitempty"`
}

// The default limits.
const (
	DefaultMaxTaskReviewIterations = 5
	DefaultMaxPhaseAttempts        = 2
	DefaultMaxPlanRevisions        = 3
)

// Plan is a parsed plan: its markdown, the tasks and the phases they run
// in. ParsePlan builds one.
type Plan struct {
	Markdown string  `json:"markdown"`           // the plan as written (LF line ends)
	Preamble string  `json:"preamble,omitempty"` // the text before the first task: goal, context
	Mode     Mode    `json:"mode"`
	Tasks    []Task  `json:"tasks"`  // in document order
	Phases   []Phase `json:"phases"` // in run order
	// Whole is set when the plan has no task headings: it runs as one
	// task, "1", whose section is the whole plan (seeds 000-002's
	// fallback to one developer session).
	Whole bool `json:"whole,omitempty"`
}

// Task is one "### Task <id>: <title>" section of a plan.
type Task struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Type  TaskType `json:"type,omitempty"`
	// DependsOn lists the ids of the tasks that must be done first. When
	// the plan has no depends-on line for the task, it holds the task
	// before it in the document (none for the first task).
	DependsOn   []string `json:"depends_on,omitempty"`
	Files       []string `json:"files,omitempty"`
	Description string   `json:"description,omitempty"` // the free text after the bullet lines
	Line        int      `json:"line"`                  // 1-based line of the heading
	EndLine     int      `json:"end_line"`              // last line of the section, inclusive
}

// Phase is one layer of the plan: tasks whose dependencies are done, run
// in lanes (GroupLanes) and committed as one. Index is the phase's position in Plan.Phases, counted from 0;
// Number (Index+1) is what people see ("Phase 1", "phase-1/").
type Phase struct {
	Index   int      `json:"index"`
	TaskIDs []string `json:"task_ids"`
}

// Number returns Index+1, the phase's number in messages and directory
// names.
func (p Phase) Number() int { return p.Index + 1 }

// Progress is where the run is. It has no cursor of its own: the current
// phase is the last one started (CurrentPhase), and each phase keeps the
// progress of its lanes (PhaseState.Lanes: their sessions, attempts and
// review iterations).
type Progress struct {
	Phases []PhaseState `json:"phases,omitempty"` // one per Plan.Phases entry
	// PlanRevision counts the architect's revisions of the plan.
	PlanRevision int `json:"plan_revision"`
	// Lane is set only in the input of a lane's branch (a graph.Send):
	// the 1-based index, in the current phase's Lanes, of the lane the
	// branch runs. It is 0 in the run's own state.
	Lane int `json:"lane,omitempty"`
	// Story counts the Task Story's decision records. The records
	// themselves are files in the execution directory's story/, committed
	// with their phase; the state keeps only the count and the latest
	// record's hash, so a checkpoint does not grow with the story.
	Story StoryProgress `json:"story,omitzero"`
	// Recovery is recovery's checkpointed memory (nodes' recoveryState
	// holding a recovery.Memory) as JSON; it is absent until a phase of a
	// run with recovery on fails. It is raw here because package recovery
	// imports state.
	Recovery json.RawMessage `json:"recovery,omitempty"`
}

// StoryProgress is what the state knows of the Task Story.
type StoryProgress struct {
	Records int    `json:"records,omitempty"` // records written; the next is number Records+1
	Latest  string `json:"latest,omitempty"`  // hex SHA-256 of the latest record's file
	// Summaries counts the phase boundaries whose story so far the
	// summarizer wrote (the others use the deterministic compression).
	Summaries int `json:"summaries,omitempty"`
	// Expansions counts the developer sessions' expansions of an earlier
	// phase's records (the escape hatch, seed 004: expand_context, or
	// read_file of the records, in the llm driver), every session and
	// lane of the run; the run's end summary names it.
	Expansions int `json:"expansions,omitempty"`
}

// PhaseState is the progress of one phase.
type PhaseState struct {
	Index       int         `json:"index"`
	Status      PhaseStatus `json:"status"`
	Attempt     int         `json:"attempt"` // 1 for the first attempt; 0 before it starts
	StartedAt   time.Time   `json:"started_at,omitzero"`
	CompletedAt time.Time   `json:"completed_at,omitzero"`
	Error       string      `json:"error,omitempty"`
	// ErrorKind is "driver" when Error is a driver's error (the session
	// could not run; recovery on only), "" when it is the agent's.
	ErrorKind string `json:"error_kind,omitempty"`
	// PreCommit is HEAD before the phase's first attempt: the commit a
	// retry resets to. It is checkpointed before the agent starts.
	PreCommit string `json:"pre_commit,omitempty"`
	// PostCommit is the phase's own commit once it is approved.
	PostCommit string `json:"post_commit,omitempty"`
	// Untracked lists the user's untracked files (slash separated, relative
	// to the work tree) before the phase: a reset must leave them alone.
	Untracked []string `json:"untracked,omitempty"`
	// Written is what the phase's latest agent session left: the git
	// blob hash of every path it changed (outside the execution directory
	// and Untracked), "" for one it deleted; nil before the session ends.
	// A path that differs from it before the review or the commit was
	// changed outside the session (see nodes.OutsideEditsError).
	Written map[string]string `json:"written"`
	// GitSettings is the git blob hash of each file of the git directory
	// with which git can be made to run a program (configuration, hooks;
	// see workspace.Repo.GitSettings) when the phase was prepared, before
	// its agent started. A change found after a session is refused (see
	// nodes.GitSettingsError).
	GitSettings map[string]string `json:"git_settings,omitempty"`
	SummaryPath string            `json:"summary_path,omitempty"`
	// Summary is the text of SummaryPath while no commit has taken it,
	// kept only for a run that pushes to a shared remote: the file is in
	// the clone of the host that wrote it, and a host that takes the run
	// over writes it again from here, so the next phase's commit carries
	// it there too. The next phase's commit clears it.
	Summary string        `json:"summary,omitempty"`
	Review  *ReviewResult `json:"review,omitempty"` // the latest review
	// Rejections are the phase's reviews that rejected an attempt, oldest
	// first (the last MaxRejections), kept when a later review approves:
	// the inbox's phase card shows them.
	Rejections []Rejection `json:"rejections,omitempty"`
	// Kept is the phase's latest failed attempt, kept as a commit under a
	// ref of the run before the reset threw it away, for the retry's
	// prompt (seed 002: "use git diff to see what changed in the failed
	// attempt"); nil when none was kept.
	Kept  *KeptAttempt `json:"kept,omitempty"`
	Tasks []TaskState  `json:"tasks,omitempty"`
	// Lanes is the progress of the phase's lanes (state.GroupLanes of its
	// tasks), set when the phase is prepared; nil before. A phase of one
	// lane works in the run's tree; a phase of several runs each lane in
	// its own work tree and combines their work.
	Lanes []LaneProgress `json:"lanes,omitempty"`
}

// KeptAttempt is a failed attempt kept as a commit on its pre-phase
// commit (workspace.AttemptRefPrefix).
type KeptAttempt struct {
	Attempt int    `json:"attempt"`
	Ref     string `json:"ref"`    // refs/gaffer/attempts/RUN/pN-aM
	Commit  string `json:"commit"` // the commit Ref points at
	Stat    string `json:"stat"`   // its diff stat, one "path (+added -deleted)" a line
}

// MaxRejections is how many rejected reviews a PhaseState keeps.
const MaxRejections = 5

// Rejection is a review that rejected an attempt of a phase.
type Rejection struct {
	Attempt   int          `json:"attempt"`
	Iteration int          `json:"iteration"` // the review's number within the attempt, from 1
	Review    ReviewResult `json:"review"`
}

// TaskState is the progress of one task within its phase.
type TaskState struct {
	TaskID      string      `json:"task_id"`
	Status      PhaseStatus `json:"status"`
	Attempt     int         `json:"attempt"`
	StartedAt   time.Time   `json:"started_at,omitzero"`
	CompletedAt time.Time   `json:"completed_at,omitzero"`
	Error       string      `json:"error,omitempty"`
}

// ReviewResult is a reviewer's judgement of a phase, with the evaluator's
// verdict on each item.
type ReviewResult struct {
	Approved bool         `json:"approved"`
	Comments string       `json:"comments,omitempty"`
	Items    []ReviewItem `json:"items,omitempty"`
	// Tasks are the tasks a rejection is about, when the reviewer named
	// them: in a phase of several lanes only their lanes run again.
	Tasks []string `json:"tasks,omitempty"`
}

// ReviewItem is one point of a review.
type ReviewItem struct {
	Text    string  `json:"text"`
	Verdict Verdict `json:"verdict,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// Approval is the human's answer to the plan.
type Approval struct {
	Decision Decision `json:"decision"`
	Feedback string   `json:"feedback,omitempty"` // why it was rejected, or notes for a replan
}

// Approved reports whether the human approved the plan.
func (a Approval) Approved() bool { return a.Decision == DecisionApproved }

// Usage counts the tokens and cost of model calls.
// Sessions report it, checkpoints keep it by role and scripts give it
// under "usage".
type Usage struct {
	InputTokens  int     `json:"input_tokens,omitempty" yaml:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty" yaml:"output_tokens,omitempty"`
	CachedTokens int     `json:"cached_tokens,omitempty" yaml:"cached_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty" yaml:"cost_usd,omitempty"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + o.InputTokens,
		OutputTokens: u.OutputTokens + o.OutputTokens,
		CachedTokens: u.CachedTokens + o.CachedTokens,
		CostUSD:      u.CostUSD + o.CostUSD,
	}
}

// IsZero reports whether u counts nothing.
func (u Usage) IsZero() bool { return u == Usage{} }
