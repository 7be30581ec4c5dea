package state

import (
	"encoding/json"
	"testing"
)

// The run's recovery settings survive the checkpoint's JSON, an explicit
// 0 included, and a clone shares none of them.
func TestRecoveryTuningRoundTripAndClone(t *testing.T) {
	zero, nine, warn := 0, 9, 0.5
	c := RunConfig{Recovery: &RecoveryConfig{RecoveryTuning: RecoveryTuning{MaxReplansPerRun: &zero, BudgetWarnAt: &warn}}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back RunConfig
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	r := back.Recovery
	if r == nil || r.MaxReplansPerRun == nil || *r.MaxReplansPerRun != 0 || r.BudgetWarnAt == nil || *r.BudgetWarnAt != 0.5 || r.MaxReplansPerPhase != nil {
		t.Fatalf("%s decodes to %+v", b, r)
	}
	cl := c.Clone()
	*cl.Recovery.MaxReplansPerRun, *cl.Recovery.BudgetWarnAt = 7, 0.9
	if zero != 0 || warn != 0.5 {
		t.Fatal("Clone shares the recovery settings")
	}
	over := RecoveryTuning{MaxReplansPerRun: &zero}.Over(RecoveryTuning{MaxReplansPerRun: &nine, MaxHintsKept: &nine})
	if *over.MaxReplansPerRun != 0 || *over.MaxHintsKept != 9 || over.MaxReplansPerRun == &zero || over.MaxHintsKept == &nine {
		t.Fatalf("Over = %+v", over)
	}
	if !(RecoveryTuning{}).IsZero() || over.IsZero() {
		t.Fatal("IsZero")
	}
}
