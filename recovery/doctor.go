package recovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Action is what the Doctor advises. The zero value, ActionNone, is "no
// advice": what a malformed answer gives, never a default action.
type Action int

// The Doctor's actions.
const (
	ActionNone          Action = iota // no advice
	ActionRetryWithHint               // retry the phase with the hint in the prompt
	ActionReplan                      // revise the phase's approach (within its anchor)
	ActionEscalateModel               // retry the phase with the escalation model
	ActionNeedsHuman                  // interrupt and ask a human
	ActionStop                        // stop: the failure will not go away
	// ActionRollbackProvider stops using the developer's failing model
	// for the rest of the run: its other model takes over (optional:
	// Config.DoctorActions).
	ActionRollbackProvider
	// ActionExecuteFix runs the Doctor's own shell command (Advice.Command)
	// in the run's tree, confined as an agent's run_command is, before the
	// phase's next attempt; at most Config.MaxExecuteFixPerPhase times a
	// phase (optional: Config.DoctorActions).
	ActionExecuteFix
	// ActionSkipPhase proposes skipping the failing phase: its work is
	// thrown away and the run goes on with the next phase. It is only a
	// proposal: the human decides, in recovery's question (optional:
	// Config.DoctorActions).
	ActionSkipPhase
)

func actionNames() []string {
	return []string{"none", "retry_with_hint", "replan", "escalate_model", "needs_human", "stop", "rollback_provider", "execute_fix", "skip_phase"}
}

// OptionalActions returns the Doctor's optional actions, seed 003's,
// which a profile's doctor_actions may leave out: the default list.
func OptionalActions() []Action {
	return []Action{ActionRollbackProvider, ActionExecuteFix, ActionSkipPhase}
}

// Optional reports whether a is one of the Doctor's optional actions.
func (a Action) Optional() bool { return slices.Contains(OptionalActions(), a) }

// String returns the action's name, such as "retry_with_hint".
func (a Action) String() string {
	if n := actionNames(); a >= 0 && int(a) < len(n) {
		return n[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// MarshalText encodes the action as its name.
func (a Action) MarshalText() ([]byte, error) {
	if n := actionNames(); a >= 0 && int(a) < len(n) {
		return []byte(n[a]), nil
	}
	return nil, fmt.Errorf("%w: action %d", ErrMalformedAnswer, int(a))
}

// UnmarshalText decodes an action name; an unknown name is an error.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames() {
		if n == string(b) {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown action %q", ErrMalformedAnswer, b)
}

// Limits on a Doctor answer: longer answers are malformed.
const (
	maxAnswerBytes = 64 << 10
	maxFieldRunes  = 4000
)

// DoctorAnswer is the Doctor's diagnosis of a failure.
type DoctorAnswer struct {
	Action     Action   `json:"action"`
	Confidence float64  `json:"confidence"`
	Category   Category `json:"category"`
	Rationale  string   `json:"rationale"`
	Hint       string   `json:"hint,omitempty"`
	// Command is execute_fix's shell command; only that action has one.
	Command string `json:"command,omitempty"`
}

// ParseDoctorAnswer reads the Doctor's answer. The text must be exactly
// one JSON object (surrounding blanks allowed, nothing else: no prose, no
// code fence, no second value) with the fields action (retry_with_hint,
// replan, escalate_model, needs_human, stop, rollback_provider or
// execute_fix), confidence (a number in [0, 1]), category (a snake_case
// name), rationale (non-empty), hint (non-empty for retry_with_hint,
// optional otherwise) and command (non-empty for execute_fix, given with
// no other action), and no other field;
// a text field may hold at most 4000 runes and the answer 64 KiB. Any
// other text is an error matching ErrMalformedAnswer and the zero answer,
// whose action is ActionNone: no advice. There is no default action.
func ParseDoctorAnswer(text string) (DoctorAnswer, error) {
	raw, err := decodeDoctorJSON(text)
	if err != nil {
		return DoctorAnswer{}, err
	}
	a, err := raw.answer()
	if err != nil {
		return DoctorAnswer{}, err
	}
	return a, nil
}

// malformed is an error matching ErrMalformedAnswer that says why.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedAnswer, fmt.Sprintf(format, args...))
}

// rawDoctorAnswer is the Doctor's JSON object as decoded, before its
// values are checked: a nil field was not given.
type rawDoctorAnswer struct {
	Action     *string  `json:"action"`
	Confidence *float64 `json:"confidence"`
	Category   *string  `json:"category"`
	Rationale  *string  `json:"rationale"`
	Hint       *string  `json:"hint"`
	Command    *string  `json:"command"`
}

// decodeDoctorJSON decodes text as exactly one JSON object of the
// answer's fields, each spelled exactly and given once, with the required
// ones (action, confidence, category, rationale) present.
func decodeDoctorJSON(text string) (rawDoctorAnswer, error) {
	var raw rawDoctorAnswer
	if len(text) > maxAnswerBytes {
		return raw, malformed("answer is %d bytes, more than %d", len(text), maxAnswerBytes)
	}
	if !utf8.ValidString(text) {
		return raw, malformed("answer is not valid UTF-8")
	}
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return raw, malformed("answer is not a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return raw, malformed("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return raw, malformed("text after the JSON object")
	}
	if p := keyProblem([]byte(t)); p != "" {
		return raw, malformed("%s", p)
	}
	var missing []string
	for _, f := range []struct {
		name  string
		given bool
	}{{"action", raw.Action != nil}, {"confidence", raw.Confidence != nil}, {"category", raw.Category != nil}, {"rationale", raw.Rationale != nil}} {
		if !f.given {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return raw, malformed("missing %s", strings.Join(missing, ", "))
	}
	return raw, nil
}

// answer checks the decoded fields' values (a known action, a confidence
// in [0, 1], a snake_case category, a rationale, a hint for
// retry_with_hint, a command for execute_fix and only there, text fields
// within maxFieldRunes) and returns the answer they make.
func (raw rawDoctorAnswer) answer() (DoctorAnswer, error) {
	var a DoctorAnswer
	if err := a.Action.UnmarshalText([]byte(*raw.Action)); err != nil || a.Action == ActionNone {
		return a, malformed("unknown action %q", *raw.Action)
	}
	if c := *raw.Confidence; c < 0 || c > 1 || math.IsNaN(c) {
		return a, malformed("confidence %v is not in [0, 1]", c)
	}
	a.Confidence = *raw.Confidence
	if !validName(*raw.Category) {
		return a, malformed("category %q is not a snake_case name", *raw.Category)
	}
	a.Category = Category(*raw.Category)
	a.Rationale = strings.TrimSpace(*raw.Rationale)
	if a.Rationale == "" {
		return a, malformed("empty rationale")
	}
	if raw.Hint != nil {
		a.Hint = strings.TrimSpace(*raw.Hint)
	}
	if a.Action == ActionRetryWithHint && a.Hint == "" {
		return a, malformed("retry_with_hint without a hint")
	}
	if raw.Command != nil {
		a.Command = strings.TrimSpace(*raw.Command)
	}
	switch {
	case a.Action == ActionExecuteFix && a.Command == "":
		return a, malformed("execute_fix without a command")
	case a.Action != ActionExecuteFix && raw.Command != nil:
		return a, malformed("a command is only for execute_fix, not %s", a.Action)
	case strings.ContainsRune(a.Command, 0):
		return a, malformed("the command holds a NUL byte")
	}
	if utf8.RuneCountInString(a.Rationale) > maxFieldRunes || utf8.RuneCountInString(a.Hint) > maxFieldRunes || utf8.RuneCountInString(a.Command) > maxFieldRunes {
		return a, malformed("a text field is longer than %d runes", maxFieldRunes)
	}
	return a, nil
}

// keyProblem describes a key of the top-level object of data (valid JSON)
// that is given twice or not spelled exactly as a field's name, or returns
// "". encoding/json silently keeps the last of two keys and matches names
// without regard to case; a strict answer does neither.
func keyProblem(data []byte) string {
	names := map[string]bool{"action": true, "confidence": true, "category": true, "rationale": true, "hint": true, "command": true}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := tok.(string)
		if !names[k] {
			return fmt.Sprintf("unknown field %q", k)
		}
		if seen[k] {
			return fmt.Sprintf("field %q is given twice", k)
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

// Tier is which Doctor model answers: the cheap one or the strong one.
type Tier int

// The Doctor's tiers. The zero value is TierCheap.
const (
	TierCheap Tier = iota
	TierStrong
)

// String returns "cheap" or "strong".
func (t Tier) String() string {
	if t == TierStrong {
		return "strong"
	}
	if t == TierCheap {
		return "cheap"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// MarshalText encodes the tier as its name.
func (t Tier) MarshalText() ([]byte, error) {
	if t != TierCheap && t != TierStrong {
		return nil, fmt.Errorf("recovery: invalid tier %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes "cheap" or "strong".
func (t *Tier) UnmarshalText(b []byte) error {
	switch string(b) {
	case "cheap":
		*t = TierCheap
	case "strong":
		*t = TierStrong
	default:
		return fmt.Errorf("recovery: unknown tier %q", b)
	}
	return nil
}
