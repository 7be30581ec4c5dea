package metrics

// replanOutcomes are the outcome label values of gaffer_replans_total,
// as recovery.ReplanOutcome names them.
func replanOutcomes() []string {
	return []string{"accepted", "refused", "no_revision"}
}

// replanOutcome is the outcome label of a replan event: its outcome, or
// "no_revision" for an empty or unknown one, so that the label keeps to
// its fixed set and every answer is counted.
func replanOutcome(o string) string {
	for _, k := range replanOutcomes() {
		if o == k {
			return o
		}
	}
	return "no_revision"
}
