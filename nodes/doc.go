// Package nodes is gaffer's coding-agent workflow: the nodes and routers
// of a graph.Graph[state.ExecutionState] (Build), the prompts, and the
// execution directory's files.
//
//	START ─► architect ─► validator ─┬─► approval ─┬─► phased_execution ─► review ─┬─► next_task ─► phased_execution
//	  │  (plan given)        ▲        │  (interrupt) │                              ├─► phased_execution (retry)
//	  └──────────────────────┘        └─► architect  └─► architect (replan) / END  └─► END (done, or halted)
//
// # Nodes and routers
//
// architect asks the architect driver for a plan (session revision =
// Progress.PlanRevision) and leaves its markdown, unparsed, in the state.
// validator parses it (state.ParsePlan: layering, TDD check); an invalid
// plan goes back to the architect with the plan revision one higher — the
// architect's prompt re-derives the problems from the refused markdown —
// until MaxPlanRevisions revisions were refused, when the run fails with
// every problem in state.Errors. A plan the user gave (--plan) fails at
// once. approval is a graph.Interrupt whose payload is an ApprovalRequest
// and whose answer is an Answer (skipped with auto-approve): approve runs
// the phases, reject with feedback sends the plan back to the architect
// (revision one higher, the feedback in its prompt), reject without ends
// the run rejected. phased_execution runs one developer session on the
// current phase — or, for a phase of several lanes, starts them (see
// Lanes below); review judges it and carries out DecideAfterReview;
// next_task moves to the next phase.
//
// The routers (RouteStart, RouteAfterReview, …) are pure functions of the
// state and every edge is conditional: a terminal status goes to END from
// anywhere, which is how `gaffer cancel` stops a run with UpdateState —
// through restore_user_changes first when the run put the user's
// uncommitted changes aside (see below).
//
// # Lanes
//
// A phase's tasks are grouped into lanes (state.GroupLanes: tasks whose
// declared files overlap, or that declare none, share one), and the
// state keeps each lane's progress (state.LaneProgress): the run has no
// cursor of its own. A phase of one lane runs as described everywhere
// below, its session in the run's tree. A phase of several runs them as
// the runtime's fan-out (see lanes.go):
//
//	phased_execution ─► lane × N (graph.Send; at most RunConfig.Parallel at once) ─► combine ─┬─► review
//	  (dispatch)                                                                             └─► phased_execution (a conflict)
//
// Each lane is a fresh developer session with its tasks' part of the
// plan, the story so far and the signposts, in its own work tree made
// from its base (the phase's pre-phase commit) under the git directory's
// gaffer-lanes/, so no lane sees another's half-written files. Its work
// is committed there and kept by a ref; combine merges the lanes'
// commits onto the base without a work tree (git merge-tree) and puts
// the result into the run's tree as uncommitted changes, which review
// judges and commits as the phase's one commit, as for one lane. A lane
// whose work conflicts with the lanes merged before it runs again,
// alone, on their combined work, with the conflicting paths in its
// prompt: its attempt goes up, the phase's does not. A rejected review
// runs again the lanes of the tasks it names (ReviewResult.Tasks), or
// the failed ones, or all; the others keep their work. An attempt
// recovery grants beyond max_phase_attempts runs again only those lanes
// too, each in a fresh session from the pre-phase commit
// (state.PhaseState.RedoLanes); the Doctor is asked about them and the
// decision records name them. In place, the
// lanes' trees are private too, and their work is combined into the
// user's checkout. The lanes' decision records are numbered when the
// lanes are combined, in lane order.
//
// # The user's uncommitted changes (--allow-dirty)
//
// A run started with RunConfig.AllowDirty on a dirty tree never discards
// the user's work. When the plan is approved, the approval node records
// the staged entries, tracked edits and untracked (not ignored) files as
// two commits kept by refs/gaffer/stash/<run-id> (workspace.Stash) and
// puts the hash in state.Stash; that checkpoint is written before phase 1,
// whose first reset cleans the tree (the user's untracked files are not
// in phase 1's untracked snapshot: they are in the stash). When the run's
// status becomes terminal — done, halted, failed, cancelled — every router
// sends it to restore_user_changes, which puts the changes back byte for
// byte, with their modes, on top of where the run left HEAD
// (workspace.RestoreStash: idempotent, from the hash in the state), drops
// the ref and records Stash.Restored and Stash.Overlap, the paths the run
// changed too (the user's version is in the work tree, the run's in its
// commits). Killed anywhere in between, `gaffer resume` gets there. A run
// rejected before approval has touched nothing.
// DecideAfterReview is seed 001's route_after_review, by counts: approved
// and last phase → done; approved → next phase; rejected in task mode →
// the same session again until MaxTaskReviewIterations reviews; rejected
// in phased mode → a fresh session after a reset until MaxPhaseAttempts
// attempts; then halt. An agent that reports failure is a rejected review
// whose comments are its error, in full; the reviewer is not asked.
// The reviewer's and evaluator's JSON answers go through
// agent.RunStructured: an answer that does not parse is asked for once
// more in the same conversation, with the parse error; a second one fails
// the review step with an error matching agent.ErrBadOutput (the run stops
// there and `gaffer resume` asks again), so a format mismatch never loops.
//
// # What is checkpointed before which side effect
//
// The runtime writes one checkpoint after each node (graph.Sync durability
// in the CLI), and a node killed half-way is run again from its start on
// resume. Every side effect is therefore either recorded before it
// happens, or recognisable afterwards:
//
//  1. The pre-phase commit (HEAD) and the user's untracked files are
//     recorded by the node that routes into a phase — approval for phase 1,
//     next_task for the others — so they are in a checkpoint before the
//     phase's agent starts. The execution directory is left out of that
//     snapshot.
//
//  2. phased_execution, when it starts a fresh session (no session id in
//     the state: a new phase, a new attempt, or a resume after a crash
//     mid-agent, since the session id is only checkpointed once the agent
//     finished), first resets to the pre-phase commit if HEAD is elsewhere
//     or the tree has changes outside the kept paths. The reset
//     (workspace.ResetTo) keeps the user's untracked files and the
//     execution directory. In task mode a later review iteration continues
//     the session on the dirty tree and does not reset. A reset (this one
//     and the halt's) only ever undoes the run's own work: HEAD must be the
//     pre-phase commit, or reach it through commits that all carry this
//     run's Gaffer-Run trailer. Otherwise (the user committed, checked out
//     another branch, or a fork's branch went on) the node fails with a
//     HeadMovedError (ErrHeadMoved), which changes nothing and names both
//     commits; the run resumes once the branch is moved back.
//
//  3. phased_execution writes plan.md and, on a retry, the phase's
//     review-feedback.md before the agent starts; both are pure functions
//     of the state, so rewriting them is harmless.
//
//  4. review first looks for this phase and attempt's commit (trailers
//     Gaffer-Run, Gaffer-Phase, Gaffer-Attempt) at HEAD or HEAD~1: found,
//     the phase was approved and committed before a crash, and the commit
//     is adopted without asking the reviewer again. Otherwise the reviewer
//     judges the uncommitted tree; on approval plan.md and
//     execution-state.json are written and everything but the user's
//     untracked files is committed. Commits are dated when they are made
//     (Config.Clock); Config.ReproducibleDates (GAFFER_REPRODUCIBLE_DATES=1
//     in the CLI) dates them one second after their parent instead, so the
//     same work on the same repository makes the same commit.
//
//  5. After the last phase, review also writes that phase's summary and the
//     final execution-state.json and commits them ("gaffer: record of
//     SLUG", trailers Gaffer-Run and Gaffer-Record: final), again adopting
//     it when found at HEAD.
//
//  6. At the limit, review resets to the pre-phase commit keeping only the
//     user's untracked files — HEAD is the last good commit and the tree is
//     clean — and halts the run. A reset is idempotent, so a crash during
//     or after it is put right by running review again.
//
//  7. A run's user's changes are in the checkpoint (state.Stash) before
//     phase 1 cleans the tree, and put back by restore_user_changes after
//     the checkpoint that made the run terminal.
//
//  8. A phase of several lanes records, in phased_execution's checkpoint
//     before any lane starts, each due lane's base and work tree. A
//     lane's result is the branch's pending write, saved when the lane
//     finishes: a finished lane never runs again. A lane run again after
//     a crash first looks for its own commit (trailers Gaffer-Run,
//     Gaffer-Phase, Gaffer-Lane, Gaffer-Attempt; its base as parent) at
//     its ref and at its tree's HEAD: found, it is adopted with the
//     session's id, usage and decision record its message holds, and no
//     session runs; otherwise its tree is made afresh and the session
//     runs again. combine is a function of the lanes' commits (the same
//     heads give the same merge commits) and puts its result into the
//     run's tree idempotently (a path already as the result has it is
//     left), resetting first a tree changed by someone else; its
//     decision records are written by number, as a session's are. The
//     lanes' refs and trees go when the phase is committed or halted.
//     A new attempt of the phase — a rejected review's, or one recovery
//     grants — is decided in the checkpoint of the step that counts it
//     (review, recover), with the lanes that succeeded still done, their
//     heads kept by their refs: only the others are dispatched, so a
//     crash between a lane's success and another lane's retry neither
//     runs the first again nor loses its work.
//
//  9. The Doctor's fix (execute_fix) is recorded as pending, and counted
//     against max_execute_fix_per_phase, in recover's checkpoint; the
//     next attempt's phased_execution runs it after its reset, before
//     the developer's session, and its checkpoint records that it ran
//     (exit and bounded output). The grant is also held in this
//     process's memory, taken before the command starts: a pending fix
//     without it was cut off by a crash, before, during or after its
//     command, and is marked abandoned, never run again (at most once;
//     the reset undid what it may have done); the retry goes on.
//
//  10. The Doctor's skip_phase is only a proposal: recover stages a
//     Question that offers skip (Question.OffersSkip) and interrupts.
//     The human's skip (Answer.Skip) is kept by the graph as a pending
//     write before recover runs again; recover's checkpoint then holds
//     the phase as skipped and the decision records (who proposed, who
//     approved) before any side effect. next_task, on a skipped phase,
//     resets the tree to the pre-phase commit (the failed attempts keep
//     their refs; the execution directory and the user's files stay) and
//     prepares the next phase, or, after the last, commits the run's
//     record. A crash after the answer runs recover again with the same
//     answer, or next_task again on a reset already done (a record commit
//     at HEAD is adopted): never a retry, never a second question.
//
// Because of 1, the branch witnesses the store: a commit of the run for a
// phase whose pre-phase commit the state does not have can only exist if
// checkpoints after the state were lost. CheckCommits finds such a commit
// in HEAD's history and returns a *LostCheckpointsError (ErrLostCheckpoints)
// naming the phase; the CLI refuses to show or continue the run from the
// older state.
//
// gaffer's own writes (commits, resets, the execution directory) failing
// are node errors: the run stops there, no attempt is counted, and
// `gaffer resume` runs the node again — a full disk (ENOSPC) or a failing
// one (EIO) stops the run for resume, it does not spend an agent's
// attempt. The script driver reports such errors of its own file writes
// as session errors for the same reason.
//
// Two kinds of debris a SIGKILL can leave are cleared on the way: the
// temporary files of an execution-directory write cut short (removed
// before the directory is written again, since resets keep that
// directory), and git's lock files of a commit or reset cut short. Around
// each commit and reset a marker in the git directory names the gaffer
// pid; RecoverGitLocks (the CLI calls it once it holds the store's lock)
// removes the index and ref locks made since the marker when that pid is
// dead, and leaves every other lock alone.
//
// # The execution directory
//
// docs/gaffer/<date>-<tracker-id>-<slug>/ — without a tracker id the run
// id's unique suffix takes its place (state.RunSuffix), so every run has
// its own; fixed in the state at start — holds plan.md,
// execution-state.json (the run id and the progress, without times or
// usage), phase-N/summary.md (the phase's tasks, the files it changed
// from DiffStat, and `git diff PRE..POST` / `git show POST`) and
// phase-N/review-feedback.md (the last rejected review of phase N, with
// the evaluator's IMPLEMENT items to fix and DEFER/REJECT items listed as
// not to act on). Nothing committed depends on the clock but the commits'
// own dates, which the summaries and execution-state.json name through
// the commits' hashes: with Config.ReproducibleDates two runs with the
// same run id of the same plan on the same repository commit identical
// trees (the kill test relies on it).
//
// When each file is committed: phase N's commit takes plan.md, the
// execution-state.json of that moment, phase-N/review-feedback.md when the
// phase was retried, and phase-(N-1)/summary.md — a summary names its
// phase's own commit, so it can only be written after that commit (by
// next_task) and rides in the next one; the last phase's summary is in the
// record commit. Between being written and being committed these files are
// untracked and inside a kept path, so retries' resets never lose them.
// On a shared remote (Config.Publish) a summary's text also stays in the
// state (PhaseState.Summary) until the next phase's commit takes it, and
// the next phase writes it again before its agent starts: a host that
// takes the run over mid-phase has a clone of the remote without it.
// A halt resets them away with the failed phase (the tree must be clean at
// the last good commit); the halted phase's review, error and completion
// time stay in the run's state (`gaffer status --json`), and the halt's
// entry in state.Errors carries the cause on one line (the agent's error,
// else the review's comments: their first lines, cut to a sane size).
//
// # Prompts
//
// The developer's prompt (PhasePrompt) starts with PhasePrefix, the same
// bytes for every phase of every run, then signposts (the plan's path, the
// earlier summaries' paths, git commands), the phase's own plan sections
// (state.PhaseContext), the retry context (framing varied by attempt, the
// previous errors in full, the path of review-feedback.md) and ends by
// restating the assignment. Its size does not grow with the number of
// phases before it.
//
// # The Task Story
//
// A developer session whose report carries story facts (agent.Report.Story:
// decisions, commands, methods, dependencies, requirements,
// recommendations) gets a decision record, written by phased_execution
// after the session as story/NNN-<role>-p<phase>-a<attempt>.json in the
// execution directory (package story has the model). NNN is
// Progress.Story.Records+1, so the name is fixed by the state: a node run
// again after a lost checkpoint removes the files numbered from NNN on and
// writes the same record again, never a second one. Records are untracked
// until the phase's commit takes them (a retry's reset keeps the execution
// directory, so a failed attempt's record stays for the next attempt; a
// halt resets them away with the phase); git is the history. A review
// that says something (a rejection, items, an approval with more than a
// word or three) gets a reviewer's record too, written by review as soon
// as the reviewer answers (story/NNN-reviewer-pP-aA.json: the verdict and
// comments as its summary, items to implement as recommendations; a
// deferred or rejected item stays in review-feedback.md only), so its
// "do Y instead" reaches later phases; a
// resume that adopts the phase's commit counts the record that commit
// holds. The state
// keeps only Progress.Story (the count, the latest record's hash, how
// many summaries the summarizer wrote), so checkpoints do not grow with
// the story.
//
// The phase prompt carries, after the stable prefix and the signposts
// (where the summaries' signpost gives way to one that points at story/
// relative to plan.md: the story is what the summaries would tell, and
// their git commands are the prior-work line's), the story so far — the
// "## Story so far" section of the previous phase's summary.md,
// story.Level2 of the earlier phases' records — and this phase's records
// across attempts and review iterations (story.Level1). Nothing is said
// twice: once the phase has records of its own, the story so far is
// story.Level2Without them (what they supersede or restate left out) and
// this phase's is story.Level1Without what the story so far shows.
// next_task (and review, after the last
// phase) writes the story so far into summary.md: the summarizer's text
// when the run has a summarizer (RunConfig.Agents.Summarizer) and
// story.CheckSummary accepts it, else the deterministic one; a summarizer
// that fails, cannot run or is refused changes nothing but a log line. Its
// usage is the "summarizer" role's; when that role's share of the run's
// cost (tokens without prices) is over events.ContextCostLimit, the
// context_cost event fires. The llm driver's expand_context tool reads a
// phase's records from Session.StoryDir; each developer session's
// Report.Expansions (a lane's too) is added to Progress.Story.Expansions
// with its usage and carried by its agent_usage event, which the metric
// gaffer_story_expansions_total counts (docs/context.md, the escape hatch).
//
// # Events
//
// Nodes emit the custom events of package events with graph.Emit:
// agent_usage after every agent session (and its usage is added to
// state.Usage by role), review after every verdict, phase_finished after
// every attempt or iteration (completed, retried, halted, failed) and
// run_status when the run's status changes. With recovery on they also
// emit recovery_failure, recovery_decision, doctor_call, replan,
// stuck_decision and budget_warning.
//
// # Notices (RunConfig.Notify set)
//
// A notice for a person (state.Notice, delivered by package notify) is
// appended to state.Outbox by the node whose step makes the change it
// tells of, so both are in one checkpoint: withStatus for completed,
// halted and failed; checkBudget for budget_warning. An interrupt's
// checkpoint keeps the state from before the interrupting node, so what
// approval or recover would write before interrupting is lost: the
// awaiting_approval notice is appended by the validator with the valid
// plan (unless the run auto-approves), and needs_human by toHuman with
// the question it stages, one step before the interrupt. A node run again
// appends from the same input, so a notice is never added twice.
//
// # Recovery (RunConfig.Recovery set)
//
// A rejected attempt that would retry or halt is recorded by review in
// Progress.Recovery (a recoveryState holding the recovery.Memory): its
// category, fingerprint and bounded tail, from the agent's real error
// text (command output and all), a driver's error (ErrorKind "driver": a
// developer session the model endpoint refused is a failed attempt, not
// a failed run) or the review. The phase's goal anchor is frozen at its
// first failure from the approved plan, which cannot change after the
// approval. Review then reserves a replan (the replan trigger) or a
// Doctor call: the reservation is in review's checkpoint, before the
// recover node makes the call. A call pending in a checkpoint that this
// process did not reserve was cut off by a crash: recover checkpoints
// recovery.RetryPending's retry first, then makes it exactly once more;
// the second time it is abandoned as no advice. The Doctor's answer and
// the replanner's revision are checkpointed by recover's step before the
// next attempt starts. A phase that used max_phase_attempts goes to the
// recover node instead of halting (decideRecover: the tree is left as
// it is, the next attempt's fresh session resets it); recovery grants
// one more attempt for a hint, an accepted revision, an escalation or a
// human's retry, and otherwise runs the stuck handler, whose stop is
// today's halt (the same reset, message and history; the decision
// records under the execution directory's recovery/ stay). A revision
// that passes recovery.CheckRevision but rewrites the anchored tasks is
// put to the reviewer model, when the profile names one, within the same
// pending replan call (checkRevision: a crash before the replan's
// checkpoint asks both again, once); its no refuses the revision. Reduce-scope,
// needs-human and a refused (narrowing) revision interrupt in recover
// with a Question; an Answer resumes it (Approved: another attempt with
// the feedback in its prompt; not approved: the halt). With recovery
// off none of this runs and Progress.Recovery stays absent. Every
// decision takes its thresholds and budgets from the run's stored
// RunConfig.Recovery (recovery.Config.Apply: what the profile set when the
// run started, the defaults for the rest), never from gaffer.yaml.
package nodes
