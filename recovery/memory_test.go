package recovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReserveBeforeCall(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	before := m.Clone()
	reserved, call, err := Reserve(m, Request{Kind: CallDoctor, Phase: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, before) {
		t.Fatal("Reserve changed its input")
	}
	// The Memory to checkpoint already counts the call and names it pending.
	if reserved.DoctorCalls != 1 || reserved.Phase(0).DoctorCalls != 1 || reserved.Pending == nil || *reserved.Pending != call || call.Tries != 1 || call.ID != 1 {
		t.Fatalf("reserved = %+v, call = %+v", reserved, call)
	}
	if _, _, err := Reserve(reserved, Request{Kind: CallReplan, Phase: 0}, cfg); !errors.Is(err, ErrCallPending) {
		t.Fatalf("second reservation while one is pending: %v", err)
	}
	if _, _, err := CompleteDoctor(reserved, call.ID+1, hintAnswer, cfg); !errors.Is(err, ErrNoPendingCall) {
		t.Fatalf("completing another id: %v", err)
	}
	if _, err := Complete(m, call.ID); !errors.Is(err, ErrNoPendingCall) {
		t.Fatalf("completing with nothing pending: %v", err)
	}
}

// TestCrashDuringCall: the Memory with the reservation was checkpointed,
// then the process died during the call. On resume the call is made once
// more and never counted twice; a second crash abandons it.
func TestCrashDuringCall(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	m, call, err := Reserve(m, Request{Kind: CallDoctor, Phase: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkpoint := roundTrip(t, m) // crash here

	again, retry, ok := RetryPending(checkpoint)
	if !ok || retry.ID != call.ID || retry.Tries != 2 || again.Pending.Tries != 2 {
		t.Fatalf("first resume: ok=%v retry=%+v", ok, retry)
	}
	if again.DoctorCalls != 1 || again.Phase(0).DoctorCalls != 1 {
		t.Fatalf("the retried call was counted again: %+v", again)
	}
	checkpoint2 := roundTrip(t, again) // crash again during the retry

	gone, abandoned, ok := RetryPending(checkpoint2)
	if ok || gone.Pending != nil || abandoned.ID != call.ID {
		t.Fatalf("second resume: ok=%v pending=%+v", ok, gone.Pending)
	}
	if gone.DoctorCalls != 1 {
		t.Fatalf("counters changed on abandon: %+v", gone)
	}
	if _, _, ok := RetryPending(gone); ok {
		t.Fatal("nothing pending, yet RetryPending allowed a call")
	}
	// After the answer is checkpointed there is nothing to retry.
	done, _, err := CompleteDoctor(again, call.ID, hintAnswer, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := RetryPending(roundTrip(t, done)); ok {
		t.Fatal("the Doctor would be called again after its answer was checkpointed")
	}
}

// TestCrashLoopNeverExceedsBudget: a process that reserves, crashes,
// resumes and reserves again can never make more calls than the budget.
func TestCrashLoopNeverExceedsBudget(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	calls := 0
	for i := 0; i < 20; i++ {
		if m.Pending != nil { // resume after a crash
			next, _, ok := RetryPending(m)
			if ok {
				calls++ // the cut-off call is made once more, and the process crashes again
			}
			m = roundTrip(t, next)
			continue
		}
		next, _, err := Reserve(m, Request{Kind: CallDoctor, Phase: 0}, cfg)
		if err != nil {
			break
		}
		calls++ // the call is made, then the process crashes before the answer
		m = roundTrip(t, next)
	}
	if limit := 2 * cfg.MaxDoctorCallsPerPhase; calls > limit || m.Phase(0).DoctorCalls != cfg.MaxDoctorCallsPerPhase {
		t.Fatalf("calls made = %d (at most %d), counted %d", calls, limit, m.Phase(0).DoctorCalls)
	}
}

func roundTrip(t testing.TB, m Memory) Memory {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var out Memory
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMemoryJSONRoundTrip(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 2, 2, testFail, cfg)
	m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 2, Tier: TierStrong}, hintAnswer, cfg)
	a, err := FreezeAnchor(samplePlan(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	m = WithAnchor(m, 0, a)
	m = RecordEscalation(m, 2)
	m, _, _ = Reserve(m, Request{Kind: CallReplan, Phase: 2}, cfg)
	if got := roundTrip(t, m); !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip changed memory:\n got %+v\nwant %+v", got, m)
	}
	b, _ := json.Marshal(m)
	for _, key := range []string{`"tier":"strong"`, `"kind":"replan"`, `"action":"retry_with_hint"`, `"category":"test_failure"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
}

func TestRecordFailureIsBounded(t *testing.T) {
	cfg := mustConfig(t, Config{MaxFailuresKept: 3, MaxTailRunes: 50})
	long := Input{AgentFailed: true, AgentError: strings.Repeat("é", 100) + "the end"}
	m := failN(t, Memory{}, 0, 5, long, cfg)
	p := m.Phase(0)
	if p.Attempts != 5 || len(p.Failures) != 3 || p.Failures[0].Attempt != 3 {
		t.Fatalf("phase = %+v", p)
	}
	if tl := p.Failures[2].Tail; utf8.RuneCountInString(tl) != 50 || !strings.HasSuffix(tl, "the end") || !utf8.ValidString(tl) {
		t.Errorf("tail = %q", tl)
	}
	if p.Failures[2].Fingerprint != Fingerprint(long.Text()) {
		t.Error("fingerprint is not of the whole text")
	}
}

func TestTransitionsDoNotAlias(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, hintAnswer, cfg)
	snapshot := m.Clone()
	n, _ := RecordFailure(m, 0, 3, testFail, cfg)
	n, _ = reserveDoctor(t, n, Request{Kind: CallDoctor, Phase: 0}, strings.Replace(hintAnswer, "check the unit", "other", 1), cfg)
	n = RecordEscalation(n, 0)
	n.Phases[0].Failures[0].Tail = "mutated"
	n.Phases[0].Hints[0] = "mutated"
	if !reflect.DeepEqual(m, snapshot) {
		t.Fatal("a transition or a change to its result changed the earlier Memory")
	}
}

func TestRedactTokens(t *testing.T) {
	cases := map[string]string{
		"401: invalid key sk-ant-api03-AbCdEfGh1234567890xyz": "401: invalid key [redacted]",
		"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def":  "Authorization: [redacted]",
		"connect: password=hunter22secret host=db":            "connect: password=[redacted] host=db",
		`{"api_key": "0123456789abcdef"}`:                     `{"api_key": "[redacted]"}`,
		"token ghp_0123456789abcdefghijABCDEFGHIJ used":       "token [redacted] used",
		"AWS AKIAIOSFODNN7EXAMPLE denied":                     "AWS [redacted] denied",
		"--- FAIL: TestToken (0.00s) token_test.go:12":        "--- FAIL: TestToken (0.00s) token_test.go:12",
	}
	for in, want := range cases {
		if got := RedactTokens(in); got != want {
			t.Errorf("RedactTokens(%q) = %q, want %q", in, got, want)
		}
	}
	cfg := mustConfig(t, Config{})
	_, f := RecordFailure(Memory{}, 0, 1, Input{Driver: DriverAuth, DriverError: "refused sk-proj-0123456789abcdefghij"}, cfg)
	if strings.Contains(f.Tail, "0123456789abcdefghij") {
		t.Errorf("a key reached the tail: %q", f.Tail)
	}
}

func TestRecordFailureWithoutEvidenceIsGaveUp(t *testing.T) {
	cfg := mustConfig(t, Config{})
	if _, f := RecordFailure(Memory{}, 0, 1, Input{}, cfg); f.Category != CatGaveUp {
		t.Errorf("category = %s", f.Category)
	}
}
