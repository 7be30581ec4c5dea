package recovery

import (
	"fmt"
	"unicode/utf8"
)

// ReplanDecision is the replan trigger's verdict on a phase.
type ReplanDecision struct {
	Replan     bool    `json:"replan"`
	Reason     string  `json:"reason"`
	Similarity float64 `json:"similarity,omitempty"` // of the last two failures, when compared by text
}

// ShouldReplan applies the replan trigger to phase index after its latest
// recorded failure. It never replans a failure of a fatal error type
// (Config.FatalTypes: the run stops at once, FatalType). It replans at
// once when that failure's category is a configured fatal one; otherwise when the last Config.TriggerThreshold
// failures (2 by default) share a category and each is at least
// Config.SimilarityThreshold similar to the one before (Ratio of their
// normalized tails). When either of two normalized messages is shorter
// than Config.MinMessageLength runes there is too little text to compare
// and the category alone decides; with message_similarity_enabled: false
// (Config.NoMessageSimilarity, seed 003's similarity_enabled) messages
// are never compared and the category alone always decides. It never replans past the budgets: one
// replan per phase, five per run by default. cfg must be validated.
func ShouldReplan(m Memory, index int, cfg Config) ReplanDecision {
	p := m.Phase(index)
	if len(p.Failures) == 0 {
		return ReplanDecision{Reason: "no failure recorded"}
	}
	if err := budgetLeft(m, Request{Kind: CallReplan, Phase: index}, cfg); err != nil {
		return ReplanDecision{Reason: err.Error()}
	}
	last := p.Failures[len(p.Failures)-1]
	if cfg.IsFatalType(last.Category) {
		return ReplanDecision{Reason: fmt.Sprintf("fatal error type %s: the run stops, no replan", last.Category)}
	}
	if cfg.IsFatal(last.Category) {
		return ReplanDecision{Replan: true, Reason: fmt.Sprintf("fatal category %s", last.Category)}
	}
	n := cfg.TriggerThreshold
	if len(p.Failures) < n {
		return ReplanDecision{Reason: fmt.Sprintf("%d of %d similar failures", len(p.Failures), n)}
	}
	recent := p.Failures[len(p.Failures)-n:]
	d := ReplanDecision{Replan: true, Similarity: 1}
	for i := 1; i < len(recent); i++ {
		a, b := recent[i-1], recent[i]
		if a.Category != b.Category {
			return ReplanDecision{Reason: fmt.Sprintf("categories differ: %s, then %s", a.Category, b.Category)}
		}
		if cfg.NoMessageSimilarity {
			continue // message similarity is off: the category decides
		}
		na, nb := Normalize(a.Tail), Normalize(b.Tail)
		if utf8.RuneCountInString(na) < cfg.MinMessageLength || utf8.RuneCountInString(nb) < cfg.MinMessageLength {
			continue // too short to compare: the category decides
		}
		r := Ratio(na, nb)
		d.Similarity = min(d.Similarity, r)
		if r < cfg.SimilarityThreshold {
			return ReplanDecision{Similarity: r, Reason: fmt.Sprintf("%s failures differ (similarity %.2f < %.2f)", b.Category, r, cfg.SimilarityThreshold)}
		}
	}
	d.Reason = fmt.Sprintf("%d consecutive %s failures (similarity %.2f)", n, last.Category, d.Similarity)
	if cfg.NoMessageSimilarity {
		d.Similarity = 0
		d.Reason = fmt.Sprintf("%d consecutive %s failures (message similarity off)", n, last.Category)
	}
	return d
}
