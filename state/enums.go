package state

import "fmt"

// PhaseStatus is the status of a phase or of one task in it.
type PhaseStatus int

// The statuses of a phase or task. The zero value is PhasePending.
const (
	PhasePending   PhaseStatus = iota // not started
	PhaseRunning                      // an agent session is working on it
	PhaseCompleted                    // reviewed, approved and committed
	PhaseFailed                       // out of attempts, or failed for good
	PhaseRetrying                     // rejected; another attempt is due
	// PhaseSkipped: recovery's Doctor proposed skipping the phase and the
	// human approved; its work was thrown away, nothing of it committed.
	PhaseSkipped
)

func phaseStatusNames() []string {
	return []string{"pending", "running", "completed", "failed", "retrying", "skipped"}
}

// String returns the status's name, such as "pending".
func (s PhaseStatus) String() string { return enumString(phaseStatusNames(), int(s), "PhaseStatus") }

// MarshalText encodes the status as its name.
func (s PhaseStatus) MarshalText() ([]byte, error) {
	return enumMarshal(phaseStatusNames(), int(s), "phase status")
}

// UnmarshalText decodes a status name; an unknown name is an error.
func (s *PhaseStatus) UnmarshalText(b []byte) error {
	return enumUnmarshal(phaseStatusNames(), b, "phase status", (*int)(s))
}

// RunStatus is the status of a whole run.
type RunStatus int

// The statuses of a run. The zero value is RunRunning: a run is running
// from the moment it is created until it stops.
const (
	RunRunning          RunStatus = iota // in progress
	RunAwaitingApproval                  // stopped until a human approves or rejects the plan
	RunCompleted                         // every phase completed
	RunFailed                            // stopped by an error it cannot recover from
	RunHalted                            // a phase ran out of review iterations or attempts
	RunRejected                          // the human rejected the plan
	RunCancelled                         // the user cancelled it
)

func runStatusNames() []string {
	return []string{"running", "awaiting_approval", "completed", "failed", "halted", "rejected", "cancelled"}
}

// String returns the status's name, such as "awaiting_approval".
func (s RunStatus) String() string { return enumString(runStatusNames(), int(s), "RunStatus") }

// Terminal reports whether a run with this status has ended: it is neither
// running nor awaiting approval.
func (s RunStatus) Terminal() bool { return s != RunRunning && s != RunAwaitingApproval }

// MarshalText encodes the status as its name.
func (s RunStatus) MarshalText() ([]byte, error) {
	return enumMarshal(runStatusNames(), int(s), "run status")
}

// UnmarshalText decodes a status name; an unknown name is an error.
func (s *RunStatus) UnmarshalText(b []byte) error {
	return enumUnmarshal(runStatusNames(), b, "run status", (*int)(s))
}

// TaskType is the kind of work a task does. Plans without types use TypeNone.
type TaskType int

// The task types. The zero value is TypeNone.
const (
	TypeNone     TaskType = iota // the plan gives no type
	TypeTest                     // write failing tests (red)
	TypeImpl                     // make the tests pass (green)
	TypeRefactor                 // change structure, not behaviour
)

func taskTypeNames() []string { return []string{"none", "test", "impl", "refactor"} }

// String returns the type's name: "none", "test", "impl" or "refactor".
func (t TaskType) String() string { return enumString(taskTypeNames(), int(t), "TaskType") }

// MarshalText encodes the type as its name.
func (t TaskType) MarshalText() ([]byte, error) {
	return enumMarshal(taskTypeNames(), int(t), "task type")
}

// UnmarshalText decodes a type name; an unknown name is an error.
func (t *TaskType) UnmarshalText(b []byte) error {
	return enumUnmarshal(taskTypeNames(), b, "task type", (*int)(t))
}

// Mode is how a plan's tasks are grouped into phases.
type Mode int

// The modes. The zero value is ModeTask.
const (
	// ModeTask is a plain "### Task N:" plan: one task per phase, in
	// document order (seed 001).
	ModeTask Mode = iota
	// ModePhased is a plan with type or depends-on lines: tasks are
	// layered by dependency, one layer per phase (seed 000).
	ModePhased
)

func modeNames() []string { return []string{"task", "phased"} }

// String returns "task" or "phased".
func (m Mode) String() string { return enumString(modeNames(), int(m), "Mode") }

// MarshalText encodes the mode as its name.
func (m Mode) MarshalText() ([]byte, error) { return enumMarshal(modeNames(), int(m), "mode") }

// UnmarshalText decodes a mode name; an unknown name is an error.
func (m *Mode) UnmarshalText(b []byte) error {
	return enumUnmarshal(modeNames(), b, "mode", (*int)(m))
}

// ExecMode is how a profile asks plans to run (its mode: key): ExecAuto
// lets each plan's lines choose its Mode, the others force one.
type ExecMode string

// The execution modes. The zero value is ExecAuto.
const (
	ExecAuto   ExecMode = ""       // a plan with type or depends-on lines is phased, else task
	ExecTask   ExecMode = "task"   // one task per phase, in the plan's order (phased execution off)
	ExecPhased ExecMode = "phased" // tasks layered by dependency
)

// ParseExecMode reads a mode: "auto" (or empty), "task" or "phased".
func ParseExecMode(s string) (ExecMode, bool) {
	switch s {
	case "", "auto":
		return ExecAuto, true
	case "task", "phased":
		return ExecMode(s), true
	}
	return "", false
}

// Decision is the human's answer to the plan.
type Decision int

// The decisions. The zero value is DecisionNone: nobody has answered yet.
const (
	DecisionNone     Decision = iota // not answered
	DecisionApproved                 // run the plan
	DecisionRejected                 // do not run it (see Approval.Feedback)
)

func decisionNames() []string { return []string{"none", "approved", "rejected"} }

// String returns "none", "approved" or "rejected".
func (d Decision) String() string { return enumString(decisionNames(), int(d), "Decision") }

// MarshalText encodes the decision as its name.
func (d Decision) MarshalText() ([]byte, error) {
	return enumMarshal(decisionNames(), int(d), "decision")
}

// UnmarshalText decodes a decision name; an unknown name is an error.
func (d *Decision) UnmarshalText(b []byte) error {
	return enumUnmarshal(decisionNames(), b, "decision", (*int)(d))
}

// Verdict is what the workflow does with one review item.
type Verdict string

// The verdicts, as the evaluator writes them. An item may have no verdict
// yet ("").
const (
	VerdictImplement Verdict = "IMPLEMENT" // act on it in the next attempt
	VerdictReject    Verdict = "REJECT"    // the reviewer is wrong; ignore it
	VerdictDefer     Verdict = "DEFER"     // valid but out of scope; log it
)

// String returns the verdict as written, such as "IMPLEMENT".
func (v Verdict) String() string { return string(v) }

// Valid reports whether v is one of the three verdicts or empty.
func (v Verdict) Valid() bool {
	return v == "" || v == VerdictImplement || v == VerdictReject || v == VerdictDefer
}

func enumString(names []string, i int, typ string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

func enumMarshal(names []string, i int, what string) ([]byte, error) {
	if i >= 0 && i < len(names) {
		return []byte(names[i]), nil
	}
	return nil, fmt.Errorf("%w: %s %d", ErrInvalidValue, what, i)
}

func enumUnmarshal(names []string, b []byte, what string, dst *int) error {
	for i, n := range names {
		if n == string(b) {
			*dst = i
			return nil
		}
	}
	return fmt.Errorf("%w: unknown %s %q", ErrInvalidValue, what, b)
}

// UnmarshalText decodes a verdict; anything but the three verdicts or ""
// is an error.
func (v *Verdict) UnmarshalText(b []byte) error {
	if w := Verdict(b); w.Valid() {
		*v = w
		return nil
	}
	return fmt.Errorf("%w: unknown verdict %q", ErrInvalidValue, b)
}
