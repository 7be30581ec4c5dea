package recovery

import (
	"strings"
	"testing"
)

// TestFatalErrorTypesStopAtOnce: a failure of a fatal error type (seed
// 003's fatal_error_types), given by a recovery.fatal rule of that name,
// gets no replan and no Doctor; the stuck handler asks the human at
// its first failure, before any other rule.
func TestFatalErrorTypesStopAtOnce(t *testing.T) {
	rules := []FatalRule{{Name: "schema_mismatch", Pattern: `column "\w+" does not exist`}, {Name: "schema_drift", Pattern: `SCHEMA DRIFT`}}
	mismatch := Input{AgentFailed: true, AgentError: `ERROR: column "owner_id" does not exist (SQLSTATE 42703)`}
	cfg := mustConfig(t, Config{Fatal: rules})
	m, f := RecordFailure(Memory{}, 0, 1, mismatch, cfg)
	if f.Category != "schema_mismatch" {
		t.Fatalf("category %s", f.Category)
	}
	if cat, ok := FatalType(m, 0, cfg); !ok || cat != "schema_mismatch" {
		t.Fatalf("FatalType = %s, %v", cat, ok)
	}
	if d := ShouldReplan(m, 0, cfg); d.Replan || !strings.Contains(d.Reason, "fatal error type schema_mismatch") {
		t.Fatalf("ShouldReplan = %+v", d)
	}
	m2, _ := RecordFailure(m, 0, 2, mismatch, cfg)
	if _, ok, why := DoctorRequest(m2, 0, cfg); ok || !strings.Contains(why, "fatal error type") {
		t.Fatalf("DoctorRequest after 2 fatal failures: %v %s", ok, why)
	}
	s := SituationOf(m, 0, cfg)
	s.Ambiguous, s.IterationCap, s.Iteration = true, 1, 5 // rule 0 comes before them
	if d, why := Stuck(s, cfg); d != StuckNeedsHuman || !strings.Contains(why, "fatal error type schema_mismatch") {
		t.Fatalf("Stuck = %s (%s)", d, why)
	}

	// Not a fatal error type: a fatal rule's category replans, as before.
	drift, _ := RecordFailure(Memory{}, 0, 1, Input{AgentFailed: true, AgentError: "SCHEMA DRIFT"}, cfg)
	if _, ok := FatalType(drift, 0, cfg); ok || !ShouldReplan(drift, 0, cfg).Replan {
		t.Fatal("schema_drift is no fatal error type: it replans")
	}
	// fatal_error_types: [] turns the types off: the same failure replans.
	none := mustConfig(t, Config{Fatal: rules, FatalTypes: []Category{}})
	m3, _ := RecordFailure(Memory{}, 0, 1, mismatch, none)
	if _, ok := FatalType(m3, 0, none); ok || !ShouldReplan(m3, 0, none).Replan {
		t.Fatal("with no fatal error types, schema_mismatch is an ordinary fatal rule")
	}
	if s := SituationOf(m3, 0, none); s.Fatal != CatNone {
		t.Fatalf("Situation.Fatal = %s", s.Fatal)
	}
}

// TestDoctorDiagnosisOfAFatalTypeAsksTheHuman: whatever the Doctor
// advises, an answer whose category is a fatal error type is advice to
// ask the human, and the rationale names the type.
func TestDoctorDiagnosisOfAFatalTypeAsksTheHuman(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	answer := `{"action":"retry_with_hint","confidence":0.8,"category":"api_contract_wrong","rationale":"the client calls /v2/items, the server only has /v1","hint":"use v1"}`
	_, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, answer, cfg)
	if adv.Action != ActionNeedsHuman || !adv.Fatal || adv.Category != "api_contract_wrong" ||
		!strings.HasPrefix(adv.Rationale, "fatal error type api_contract_wrong (advised retry_with_hint): the client calls") {
		t.Fatalf("advice %+v", adv)
	}
	custom := mustConfig(t, Config{FatalTypes: []Category{"wrong_database"}})
	_, adv = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, answer, custom)
	if adv.Action != ActionRetryWithHint || adv.Fatal {
		t.Fatalf("api_contract_wrong is not fatal when the list leaves it out: %+v", adv)
	}
	_, adv = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, strings.Replace(answer, "api_contract_wrong", "wrong_database", 1), custom)
	if adv.Action != ActionNeedsHuman || !adv.Fatal {
		t.Fatalf("a configured fatal error type: %+v", adv)
	}
}
