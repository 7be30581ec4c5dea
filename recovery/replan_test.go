package recovery

import (
	"strings"
	"testing"
)

func TestShouldReplan(t *testing.T) {
	goFail := func(line, tmp string) Input {
		return Input{AgentFailed: true, TestOutput: "--- FAIL: TestLoad (0.01s)\n    " + tmp + "/load_test.go:" + line + ": Load(cfg) returned error: open " + tmp + "/cfg.yaml: no such file or directory\nFAIL"}
	}
	otherFail := Input{AgentFailed: true, TestOutput: "--- FAIL: TestSave (0.00s)\n    save_test.go:88: Save wrote 3 records, want 4; the last record was dropped\nFAIL"}
	buildFail := Input{AgentFailed: true, TestOutput: "# app\n./load.go:9:2: undefined: yaml.Unmarshall"}
	short := Input{Driver: DriverTimeout, DriverError: "deadline exceeded"}
	fatal := Input{AgentFailed: true, AgentError: "The project is Python 2 only; this cannot work on it."}
	stack := Input{AgentFailed: true, AgentError: "This is a Rails app, not Django."}
	cfg := mustConfig(t, Config{Fatal: []FatalRule{{Name: "python2_only", Pattern: `Python 2 only`}, {Name: "wrong_tech_stack", Pattern: `not Django`}}})

	cases := []struct {
		name   string
		inputs []Input
		want   bool
		reason string
	}{
		{"one failure", []Input{goFail("12", "/tmp/TestLoad1/001")}, false, "1 of 2"},
		{"same failure twice, other lines and temp dirs", []Input{goFail("12", "/tmp/TestLoad1/001"), goFail("19", "/tmp/TestLoad77/002")}, true, "2 consecutive test_failure"},
		{"two different test failures", []Input{goFail("12", "/tmp/a"), otherFail}, false, "differ (similarity"},
		{"different categories", []Input{goFail("12", "/tmp/a"), buildFail}, false, "categories differ"},
		{"same category after a different one", []Input{otherFail, goFail("12", "/tmp/a"), goFail("13", "/tmp/b")}, true, "consecutive"},
		{"short messages compare by category", []Input{short, {Driver: DriverTimeout, DriverError: "killed after 10m"}}, true, "timeout"},
		{"fatal at the first failure", []Input{fatal}, true, "fatal category python2_only"},
		{"a fatal error type is never replanned", []Input{stack}, false, "fatal error type wrong_tech_stack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Memory{}
			for i, in := range c.inputs {
				m, _ = RecordFailure(m, 0, i+1, in, cfg)
			}
			d := ShouldReplan(m, 0, cfg)
			if d.Replan != c.want || !strings.Contains(d.Reason, c.reason) {
				t.Errorf("ShouldReplan = %+v, want replan=%v with %q", d, c.want, c.reason)
			}
		})
	}
}

func TestReplanBudgets(t *testing.T) {
	cfg := mustConfig(t, Config{})
	replan := func(m Memory, phase int) (Memory, bool) {
		m = failN(t, m, phase, 2, testFail, cfg)
		d := ShouldReplan(m, phase, cfg)
		if !d.Replan {
			return m, false
		}
		m, call, err := Reserve(m, Request{Kind: CallReplan, Phase: phase}, cfg)
		if err != nil {
			t.Fatalf("ShouldReplan said yes, Reserve said %v", err)
		}
		m, err = Complete(m, call.ID)
		if err != nil {
			t.Fatal(err)
		}
		return m, true
	}
	m, ok := replan(Memory{}, 0)
	if !ok {
		t.Fatal("first replan refused")
	}
	if m, ok = replan(m, 0); ok {
		t.Fatal("second replan of one phase allowed")
	}
	if d := ShouldReplan(m, 0, cfg); !strings.Contains(d.Reason, "replans in phase 1") {
		t.Errorf("reason = %q", d.Reason)
	}
	for ph := 1; ph < 5; ph++ {
		if m, ok = replan(m, ph); !ok {
			t.Fatalf("replan of phase %d refused", ph+1)
		}
	}
	if m, ok = replan(m, 5); ok || m.Replans != 5 {
		t.Fatalf("6th replan of the run: ok=%v, replans=%d", ok, m.Replans)
	}
	if d := ShouldReplan(m, 5, cfg); !strings.Contains(d.Reason, "replans per run") {
		t.Errorf("reason = %q", d.Reason)
	}
}

// TestMessageSimilarityOff: with message_similarity_enabled: false two
// different failures of one category replan, as seed 003's trigger does
// with similarity_enabled off; two categories still do not.
func TestMessageSimilarityOff(t *testing.T) {
	a := Input{AgentFailed: true, TestOutput: "--- FAIL: TestLoad (0.01s)\n    load_test.go:12: Load(cfg) returned error: open cfg.yaml: no such file or directory\nFAIL"}
	b := Input{AgentFailed: true, TestOutput: "--- FAIL: TestSave (0.00s)\n    save_test.go:88: Save wrote 3 records, want 4; the last record was dropped\nFAIL"}
	build := Input{AgentFailed: true, TestOutput: "# app\n./load.go:9:2: undefined: yaml.Unmarshall"}
	on, off := mustConfig(t, Config{}), mustConfig(t, Config{NoMessageSimilarity: true})
	record := func(cfg Config, ins ...Input) Memory {
		var m Memory
		for i, in := range ins {
			m, _ = RecordFailure(m, 0, i+1, in, cfg)
		}
		return m
	}
	if d := ShouldReplan(record(on, a, b), 0, on); d.Replan {
		t.Fatalf("similarity on: two different failures replanned: %+v", d)
	}
	d := ShouldReplan(record(off, a, b), 0, off)
	if !d.Replan || !strings.Contains(d.Reason, "message similarity off") || d.Similarity != 0 {
		t.Fatalf("similarity off: %+v, want a replan by category", d)
	}
	if d := ShouldReplan(record(off, a, build), 0, off); d.Replan || !strings.Contains(d.Reason, "categories differ") {
		t.Fatalf("similarity off, two categories: %+v", d)
	}
}
