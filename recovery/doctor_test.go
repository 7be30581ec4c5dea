package recovery

import (
	"errors"
	"strings"
	"testing"
)

func TestParseDoctorAnswer(t *testing.T) {
	good := `{"action":"retry_with_hint","confidence":0.85,"category":"test_failure","rationale":"off by one in the loop","hint":"iterate to len(xs), not len(xs)-1"}`
	a, err := ParseDoctorAnswer("\n  " + good + "\n")
	if err != nil {
		t.Fatal(err)
	}
	want := DoctorAnswer{Action: ActionRetryWithHint, Confidence: 0.85, Category: CatTestFailure, Rationale: "off by one in the loop", Hint: "iterate to len(xs), not len(xs)-1"}
	if a != want {
		t.Errorf("got %+v, want %+v", a, want)
	}
	for _, act := range []string{"replan", "escalate_model", "needs_human", "stop"} {
		if _, err := ParseDoctorAnswer(`{"action":"` + act + `","confidence":1,"category":"build_error","rationale":"r"}`); err != nil {
			t.Errorf("action %s: %v", act, err)
		}
	}
	malformed := map[string]string{
		"empty":              "",
		"prose":              "I think you should replan.",
		"prose before":       "Sure! " + good,
		"code fence":         "```json\n" + good + "\n```",
		"second value":       good + " {}",
		"array":              "[" + good + "]",
		"unknown action":     `{"action":"delete_repo","confidence":0.9,"category":"x","rationale":"r"}`,
		"none action":        `{"action":"none","confidence":0.9,"category":"x","rationale":"r"}`,
		"action wrong case":  `{"action":"REPLAN","confidence":0.9,"category":"x","rationale":"r"}`,
		"missing action":     `{"confidence":0.9,"category":"x","rationale":"r"}`,
		"missing confidence": `{"action":"replan","category":"x","rationale":"r"}`,
		"missing category":   `{"action":"replan","confidence":0.9,"rationale":"r"}`,
		"missing rationale":  `{"action":"replan","confidence":0.9,"category":"x"}`,
		"empty rationale":    `{"action":"replan","confidence":0.9,"category":"x","rationale":"  "}`,
		"confidence > 1":     `{"action":"replan","confidence":1.2,"category":"x","rationale":"r"}`,
		"confidence < 0":     `{"action":"replan","confidence":-0.1,"category":"x","rationale":"r"}`,
		"confidence string":  `{"action":"replan","confidence":"high","category":"x","rationale":"r"}`,
		"bad category":       `{"action":"replan","confidence":0.5,"category":"Test Failure","rationale":"r"}`,
		"unknown field":      `{"action":"replan","confidence":0.5,"category":"x","rationale":"r","fix":"rm -rf"}`,
		"key in other case":  `{"Action":"replan","confidence":0.5,"category":"x","rationale":"r"}`,
		"duplicate key":      `{"action":"stop","action":"replan","confidence":0.5,"category":"x","rationale":"r"}`,
		"hint missing":       `{"action":"retry_with_hint","confidence":0.5,"category":"x","rationale":"r"}`,
		"null action":        `{"action":null,"confidence":0.5,"category":"x","rationale":"r"}`,
		"long rationale":     `{"action":"replan","confidence":0.5,"category":"x","rationale":"` + strings.Repeat("a", 4001) + `"}`,
		"invalid utf8":       "{\"action\":\"replan\",\"confidence\":0.5,\"category\":\"x\",\"rationale\":\"\xff\"}",
	}
	for name, text := range malformed {
		a, err := ParseDoctorAnswer(text)
		if !errors.Is(err, ErrMalformedAnswer) {
			t.Errorf("%s: err = %v, want ErrMalformedAnswer", name, err)
		}
		if a != (DoctorAnswer{}) || a.Action != ActionNone {
			t.Errorf("%s: answer = %+v, want the zero answer (no advice)", name, a)
		}
	}
}

func mustConfig(t testing.TB, c Config) Config {
	t.Helper()
	v, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// failN records n failures of phase with the given category.
func failN(t testing.TB, m Memory, phase, n int, in Input, cfg Config) Memory {
	t.Helper()
	for i := 0; i < n; i++ {
		m, _ = RecordFailure(m, phase, m.Phase(phase).Attempts+1, in, cfg)
	}
	return m
}

var testFail = Input{AgentFailed: true, TestOutput: "--- FAIL: TestParse (0.00s)\n    parse_test.go:42: Parse(\"1h\") = 0s, want 1h0m0s\nFAIL"}

// reserveDoctor reserves and completes one Doctor call with answer.
func reserveDoctor(t testing.TB, m Memory, req Request, answer string, cfg Config) (Memory, Advice) {
	t.Helper()
	m, call, err := Reserve(m, req, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, adv, err := CompleteDoctor(m, call.ID, answer, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, adv
}

const hintAnswer = `{"action":"retry_with_hint","confidence":0.9,"category":"test_failure","rationale":"r","hint":"check the unit"}`

func TestDoctorFromSecondAttemptAndInfraAtOnce(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 1, testFail, cfg)
	if _, ok, why := DoctorRequest(m, 0, cfg); ok {
		t.Fatalf("doctor after 1 test failure: %s", why)
	}
	m = failN(t, m, 0, 1, testFail, cfg)
	req, ok, why := DoctorRequest(m, 0, cfg)
	if !ok || req.Infra || req.Tier != TierStrong { // test_failure is high-risk by default
		t.Fatalf("after 2 failures: %+v %v %s", req, ok, why)
	}
	infra := failN(t, Memory{}, 1, 1, Input{Driver: DriverServer, DriverError: "HTTP 502"}, cfg)
	req, ok, _ = DoctorRequest(infra, 1, cfg)
	if !ok || !req.Infra {
		t.Fatalf("infra at first failure: %+v %v", req, ok)
	}
}

func TestDoctorBudgets(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := Memory{}
	// Per phase: 2 calls, then the phase's budget is spent.
	m = failN(t, m, 0, 2, testFail, cfg)
	for i := 0; i < 2; i++ {
		req, ok, why := DoctorRequest(m, 0, cfg)
		if !ok {
			t.Fatalf("call %d refused: %s", i+1, why)
		}
		m, _ = reserveDoctor(t, m, req, hintAnswer, cfg)
	}
	if _, ok, why := DoctorRequest(m, 0, cfg); ok || !strings.Contains(why, "doctor calls in phase 1") {
		t.Fatalf("third call in phase: ok=%v %s", ok, why)
	}
	_, _, err := Reserve(m, Request{Kind: CallDoctor, Phase: 0}, cfg)
	if !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("Reserve past the phase budget: %v", err)
	}
	// Infra calls draw on their own budget, not the phase's.
	m = failN(t, m, 0, 1, Input{Driver: DriverRateLimit}, cfg)
	req, ok, why := DoctorRequest(m, 0, cfg)
	if !ok || !req.Infra {
		t.Fatalf("infra call refused with the phase budget spent: %s", why)
	}
	// Per run: 10 calls over phases 1..5.
	for ph := 1; m.DoctorCalls < 10; ph++ {
		m = failN(t, m, ph, 2, testFail, cfg)
		req, ok, why := DoctorRequest(m, ph, cfg)
		if !ok {
			t.Fatalf("phase %d refused at %d run calls: %s", ph, m.DoctorCalls, why)
		}
		m, _ = reserveDoctor(t, m, req, hintAnswer, cfg)
	}
	m = failN(t, m, 40, 2, testFail, cfg)
	if _, ok, why := DoctorRequest(m, 40, cfg); ok || !strings.Contains(why, "per run") {
		t.Fatalf("11th call: ok=%v %s", ok, why)
	}
	if m.DoctorCalls != 10 {
		t.Errorf("run calls = %d", m.DoctorCalls)
	}
}

func TestInfraBudget(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := Memory{}
	for ph := 0; ph < 3; ph++ {
		m = failN(t, m, ph, 1, Input{Driver: DriverTransport}, cfg)
		req, ok, why := DoctorRequest(m, ph, cfg)
		if !ok {
			t.Fatalf("infra call %d: %s", ph+1, why)
		}
		m, _ = reserveDoctor(t, m, req, hintAnswer, cfg)
	}
	m = failN(t, m, 3, 1, Input{Driver: DriverTransport}, cfg)
	if _, ok, why := DoctorRequest(m, 3, cfg); ok || !strings.Contains(why, "infra") {
		t.Fatalf("4th infra call: ok=%v %s", ok, why)
	}
	if m.DoctorInfra != 3 || m.DoctorCalls != 3 || m.Phase(0).DoctorCalls != 0 {
		t.Errorf("counters: infra %d, run %d, phase %d", m.DoctorInfra, m.DoctorCalls, m.Phase(0).DoctorCalls)
	}
}

func TestMalformedAnswerIsCountedAndNoAdvice(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	req, _, _ := DoctorRequest(m, 0, cfg)
	m, adv := reserveDoctor(t, m, req, "You should replan this phase.", cfg)
	if adv.Action != ActionNone || adv.Malformed == "" {
		t.Errorf("advice = %+v, want no advice with a reason", adv)
	}
	if m.DoctorCalls != 1 || m.Phase(0).DoctorCalls != 1 || m.Pending != nil {
		t.Errorf("call not counted or still pending: %+v", m)
	}
	if m.Hint(0) != "" || m.Phase(0).Replans != 0 {
		t.Errorf("a malformed answer changed more than the counters: %+v", m.Phase(0))
	}
	if _, ok := StrongFollowUp(m, 0, adv, false, cfg); ok {
		t.Error("a malformed answer asked for a strong follow-up")
	}
}

func TestHintIsKeptForTheNextPrompt(t *testing.T) {
	cfg := mustConfig(t, Config{MaxHintsKept: 2})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, strings.Replace(hintAnswer, "check the unit", "h1", 1), cfg)
	m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0, Infra: true}, strings.Replace(hintAnswer, "check the unit", "h2", 1), cfg)
	m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0, Infra: true}, strings.Replace(hintAnswer, "check the unit", "h3", 1), cfg)
	if got := m.Hint(0); got != "h3" {
		t.Errorf("Hint = %q", got)
	}
	if h := m.Phase(0).Hints; len(h) != 2 || h[0] != "h2" {
		t.Errorf("hints not bounded to 2: %q", h)
	}
}

// TestTierChoiceAndStrongFollowUp: for a category in neither risk list
// (here no list: test_failure and build_error are such categories), a
// complex failure gets the strong Doctor; an unsure cheap one asks the
// strong one too.
func TestTierChoiceAndStrongFollowUp(t *testing.T) {
	cfg := mustConfig(t, Config{HighRisk: []Category{}, LowRisk: []Category{}})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	if tier := ChooseTier(m, 0, cfg); tier != TierCheap {
		t.Errorf("simple failure: %s", tier)
	}
	several := failN(t, m, 0, 1, Input{AgentFailed: true, TestOutput: "./a.go:1:1: undefined: X"}, cfg)
	if tier := ChooseTier(several, 0, cfg); tier != TierStrong {
		t.Errorf("two categories: %s", tier)
	}
	four := failN(t, m, 0, 2, testFail, cfg)
	if tier := ChooseTier(four, 0, cfg); tier != TierStrong {
		t.Errorf("4 attempts: %s", tier)
	}
	replanned, _, err := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	replanned, _ = CompleteReplan(replanned, replanned.Pending.ID, ReplanAccepted)
	if tier := ChooseTier(replanned, 0, cfg); tier != TierStrong {
		t.Errorf("after a replan: %s", tier)
	}
	noStrong := four
	noStrong.DoctorStrong = cfg.MaxDoctorStrongPerRun
	if tier := ChooseTier(noStrong, 0, cfg); tier != TierCheap {
		t.Errorf("strong budget spent: %s", tier)
	}

	unsure := `{"action":"replan","confidence":0.4,"category":"test_failure","rationale":"maybe"}`
	m2, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, unsure, cfg)
	req, ok := StrongFollowUp(m2, 0, adv, false, cfg)
	if !ok || req.Tier != TierStrong {
		t.Fatalf("unsure cheap answer: no strong follow-up")
	}
	m2, adv2 := reserveDoctor(t, m2, req, `{"action":"replan","confidence":0.9,"category":"test_failure","rationale":"sure"}`, cfg)
	if m2.DoctorStrong != 1 || m2.DoctorCalls != 2 || m2.Phase(0).DoctorCalls != 2 {
		t.Errorf("strong call not counted: %+v", m2)
	}
	if _, ok := StrongFollowUp(m2, 0, adv2, false, cfg); ok {
		t.Error("a strong answer asked for another strong answer")
	}
	_, sure := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, hintAnswer, cfg)
	if _, ok := StrongFollowUp(m, 0, sure, false, cfg); ok {
		t.Error("a confident cheap answer asked for a strong follow-up")
	}
}
