package recovery

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Memory is everything recovery remembers about a run. It is a plain,
// JSON-tagged value meant to be a field of the checkpointed state: every
// function here takes a Memory and returns a changed copy, never
// changing the one it was given, so the caller checkpoints the result
// before it acts on it.
type Memory struct {
	// Phases holds the phases that failed at least once, by Index.
	Phases []PhaseMemory `json:"phases,omitempty"`
	// Run-wide counters.
	DoctorCalls  int `json:"doctor_calls,omitempty"`  // every Doctor call, strong and infra ones included
	DoctorStrong int `json:"doctor_strong,omitempty"` // calls to the strong model
	DoctorInfra  int `json:"doctor_infra,omitempty"`  // calls for infra failures
	// Replans counts the replan calls reserved: the run's replan budget
	// spent, answered or not. The replans that answered are counted by
	// phase (PhaseMemory.Replanned).
	Replans     int `json:"replans,omitempty"`
	Escalations int `json:"escalations,omitempty"`
	// NextCallID numbers reserved calls; the first is 1.
	NextCallID int `json:"next_call_id,omitempty"`
	// Pending is the reserved call whose outcome is not recorded yet.
	Pending *Call `json:"pending,omitempty"`
}

// PhaseMemory is what recovery remembers about one phase.
type PhaseMemory struct {
	Index int `json:"index"`
	// Attempts counts the phase's failed attempts (all of them; Failures
	// keeps only the latest).
	Attempts   int        `json:"attempts,omitempty"`
	Categories []Category `json:"categories,omitempty"` // distinct, in order of first failure
	Failures   []Failure  `json:"failures,omitempty"`   // the latest Config.MaxFailuresKept, oldest first
	// Counters of this phase.
	DoctorCalls int `json:"doctor_calls,omitempty"` // non-infra Doctor calls
	// Replans counts the replan calls reserved: the phase's replan budget
	// spent. A reservation is checkpointed before the replanner is called,
	// so it counts one still pending, one cut off by crashes and one that
	// answered with no revision: it is what a budget checks, not how many
	// replans happened.
	Replans int `json:"replans,omitempty"`
	// Replanned counts the replans that answered with a revision (accepted
	// or refused); one cut off by crashes, or that produced no revision,
	// spent its budget but is not counted here.
	Replanned int `json:"replanned,omitempty"`
	// ReplansAccepted counts the revisions accepted (within the phase's
	// anchor), which the next attempt carried.
	ReplansAccepted int `json:"replans_accepted,omitempty"`
	Escalations     int `json:"escalations,omitempty"`
	// Fixes counts the Doctor's fixes (execute_fix) granted to the phase,
	// checkpointed before each runs: max_execute_fix_per_phase's count.
	Fixes int `json:"fixes,omitempty"`
	// Hints are the Doctor's hints, the latest Config.MaxHintsKept, oldest
	// first; the next attempt's prompt carries the last one.
	Hints []string `json:"hints,omitempty"`
	// LastAdvice is the Doctor's latest advice for the phase.
	LastAdvice *Advice `json:"last_advice,omitempty"`
	// Anchor is the phase's goal anchor, frozen when the plan was approved.
	Anchor *Anchor `json:"anchor,omitempty"`
}

// Failure is one failed attempt.
type Failure struct {
	Attempt     int      `json:"attempt"`
	Category    Category `json:"category"`
	Fingerprint string   `json:"fingerprint"` // Fingerprint of the attempt's whole error text
	Tail        string   `json:"tail"`        // the last Config.MaxTailRunes runes of the error text
}

// Fingerprint returns a short hex hash of Normalize(text): the same bug
// on another line, in another temp dir, at another time has the same
// fingerprint.
func Fingerprint(text string) string {
	sum := sha256.Sum256([]byte(Normalize(text)))
	return hex.EncodeToString(sum[:8])
}

// Clone returns a deep copy of m.
func (m Memory) Clone() Memory {
	c := m
	c.Phases = make([]PhaseMemory, len(m.Phases))
	for i, p := range m.Phases {
		c.Phases[i] = p.clone()
	}
	if m.Phases == nil {
		c.Phases = nil
	}
	if m.Pending != nil {
		p := *m.Pending
		c.Pending = &p
	}
	return c
}

func (p PhaseMemory) clone() PhaseMemory {
	c := p
	c.Categories = slices.Clone(p.Categories)
	c.Failures = slices.Clone(p.Failures)
	c.Hints = slices.Clone(p.Hints)
	if p.LastAdvice != nil {
		a := *p.LastAdvice
		c.LastAdvice = &a
	}
	if p.Anchor != nil {
		a := p.Anchor.clone()
		c.Anchor = &a
	}
	return c
}

// Replanned returns how many of the run's replans answered with a
// revision (the sum of PhaseMemory.Replanned), and how many of those were
// accepted. Memory.Replans, the reservations, is the budget spent.
func (m Memory) Replanned() (revised, accepted int) {
	for _, p := range m.Phases {
		revised += p.Replanned
		accepted += p.ReplansAccepted
	}
	return revised, accepted
}

// Phase returns a copy of what m remembers of phase index (the zero
// PhaseMemory with that Index when nothing).
func (m Memory) Phase(index int) PhaseMemory {
	for _, p := range m.Phases {
		if p.Index == index {
			return p.clone()
		}
	}
	return PhaseMemory{Index: index}
}

// withPhase returns a copy of m with p stored in place of its phase.
func (m Memory) withPhase(p PhaseMemory) Memory {
	c := m.Clone()
	for i := range c.Phases {
		if c.Phases[i].Index == p.Index {
			c.Phases[i] = p
			return c
		}
	}
	c.Phases = append(c.Phases, p)
	slices.SortFunc(c.Phases, func(a, b PhaseMemory) int { return a.Index - b.Index })
	return c
}

// RecordFailure returns m with a failed attempt of phase index recorded:
// its category (Classify; agent_gave_up when the Input shows no failure),
// its fingerprint and the tail of its error text, with token-shaped
// secrets masked (RedactTokens). The caller redacts the secrets it knows
// by value (the run's keys) from the Input first, as the drivers do. cfg
// must be validated.
func RecordFailure(m Memory, index, attempt int, in Input, cfg Config) (Memory, Failure) {
	text := in.Text()
	f := Failure{
		Attempt:     attempt,
		Category:    Classify(in, cfg.Fatal),
		Fingerprint: Fingerprint(text),
		Tail:        tail(RedactTokens(text), cfg.MaxTailRunes),
	}
	if f.Category == CatNone {
		f.Category = CatGaveUp // the caller says it failed; nothing says how
	}
	p := m.Phase(index)
	p.Attempts++
	if !slices.Contains(p.Categories, f.Category) {
		p.Categories = append(p.Categories, f.Category)
	}
	p.Failures = append(p.Failures, f)
	if n := len(p.Failures) - cfg.MaxFailuresKept; n > 0 {
		p.Failures = slices.Clone(p.Failures[n:])
	}
	return m.withPhase(p), f
}

// RecordEscalation returns m with one model escalation of phase index
// counted.
func RecordEscalation(m Memory, index int) Memory {
	p := m.Phase(index)
	p.Escalations++
	c := m.withPhase(p)
	c.Escalations++
	return c
}

// Hint returns the Doctor's latest hint for phase index, or "".
func (m Memory) Hint(index int) string {
	p := m.Phase(index)
	if len(p.Hints) == 0 {
		return ""
	}
	return p.Hints[len(p.Hints)-1]
}

// tail returns the last n runes of s.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

// tokenRe matches strings shaped like credentials: provider API keys
// (sk-…, ghp_…, xoxb-…, AKIA…), bearer tokens, and the value after a
// key=, token:, password= or secret= label.
var tokenRe = lazyRegexp(`(?i)\b(?:sk|pk|rk)-[a-z0-9_\-]{16,}|\bgh[pousr]_[a-z0-9]{20,}|\bxox[abpr]-[a-z0-9\-]{10,}|\bAKIA[0-9A-Z]{16}\b|\bbearer\s+[a-z0-9._~+/\-]{16,}=*|\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd)"?\s*[:=]\s*"?)[^\s"',;]{6,}`)

// RedactTokens returns s with credential-shaped substrings replaced by
// [redacted]: a defence in depth for error text that is kept in the
// checkpointed state, not a replacement for redacting known values.
func RedactTokens(s string) string {
	return tokenRe().ReplaceAllStringFunc(s, func(m string) string {
		if sub := tokenRe().FindStringSubmatch(m); sub[1] != "" {
			return sub[1] + "[redacted]"
		}
		return "[redacted]"
	})
}
