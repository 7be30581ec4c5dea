package recovery

import (
	"errors"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

func TestClassify(t *testing.T) {
	fatal := []FatalRule{{Name: "wrong_tech_stack", Pattern: `(?i)requires python 2`}}
	rejected := &state.ReviewResult{Approved: false, Items: []state.ReviewItem{{Text: "missing error check in Load", Verdict: state.VerdictImplement}}}
	cases := []struct {
		name string
		in   Input
		want Category
	}{
		{"nothing failed", Input{}, CatNone},
		{"approved review", Input{Review: &state.ReviewResult{Approved: true}}, CatNone},
		{"rate limit", Input{Driver: DriverRateLimit, DriverError: "429"}, CatInfra},
		{"5xx", Input{Driver: DriverServer}, CatInfra},
		{"transport", Input{Driver: DriverTransport}, CatInfra},
		{"refused key", Input{Driver: DriverAuth}, CatInfra},
		{"budget", Input{Driver: DriverBudget}, CatBudget},
		{"timeout", Input{Driver: DriverTimeout}, CatTimeout},
		{"turn limit", Input{Driver: DriverTurnLimit}, CatTruncation},
		{"token limit", Input{Driver: DriverTokenLimit}, CatTruncation},
		{"llm driver's turn limit report", Input{AgentFailed: true, AgentError: "the turn limit of 40 model calls was reached before the agent finished"}, CatTruncation},
		{"llm driver's session token budget report", Input{AgentFailed: true, AgentError: "the token budget of 200000 was used up (200311 tokens) before the agent finished"}, CatTruncation},
		{"the words in a test's output are not a report", Input{TestOutput: "the turn limit of 4 model calls was reached"}, CatNone},
		{"tool", Input{Driver: DriverTool, DriverError: "edit a.go: old text not found"}, CatToolError},
		{"bad output", Input{Driver: DriverBadOutput}, CatToolError},
		{"driver error names infra", Input{Driver: DriverOther, DriverError: "POST /v1/messages: HTTP 503 Service Unavailable"}, CatInfra},
		{"other driver error", Input{Driver: DriverOther, DriverError: "exit status 3"}, CatGaveUp},
		{"go build failure", Input{AgentFailed: true, TestOutput: "# example.com/app\n./main.go:12:2: undefined: Foo\nFAIL\texample.com/app [build failed]"}, CatBuildError},
		{"go vet-style compile error in agent text", Input{AgentFailed: true, AgentError: "store/badger.go:88:14: cannot use x (variable of type int) as string value"}, CatBuildError},
		{"tsc", Input{AgentFailed: true, TestOutput: "src/a.ts(3,22): error TS2307: Cannot find module './t'"}, CatBuildError},
		{"python import", Input{AgentFailed: true, TestOutput: "Traceback (most recent call last):\n  File \"a.py\", line 1\nModuleNotFoundError: No module named 'x'"}, CatBuildError},
		{"go test failure", Input{AgentFailed: true, TestOutput: "--- FAIL: TestX (0.00s)\n    x_test.go:9: got 1\nFAIL\nFAIL\texample.com/app\t0.01s"}, CatTestFailure},
		{"go panic", Input{AgentFailed: true, AgentError: "panic: runtime error: index out of range [5] with length 3"}, CatTestFailure},
		{"pytest", Input{AgentFailed: true, TestOutput: "FAILED tests/test_a.py::test_x - AssertionError: assert 2 == 3\n==== 1 failed, 3 passed in 0.12s ===="}, CatTestFailure},
		{"jest", Input{AgentFailed: true, TestOutput: "  ● Cart › applies discount\n\nTests:       1 failed, 4 passed, 5 total"}, CatTestFailure},
		{"review rejection", Input{Review: rejected}, CatReview},
		{"markdown heading is not a go build header", Input{AgentFailed: true, AgentError: "# Summary\nI could not finish: the API is unclear."}, CatGaveUp},
		{"agent gave up", Input{AgentFailed: true, AgentError: "I could not find a way to do this without changing the API."}, CatGaveUp},
		{"tests beat review", Input{Review: rejected, TestOutput: "--- FAIL: TestX (0.00s)"}, CatTestFailure},
		{"driver kind beats test output", Input{Driver: DriverTimeout, TestOutput: "--- FAIL: TestX (0.00s)"}, CatTimeout},
		{"fatal rule beats everything", Input{Driver: DriverRateLimit, AgentError: "this library requires Python 2.7"}, "wrong_tech_stack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(c.in, fatal); got != c.want {
				t.Errorf("Classify = %s, want %s\n text: %q", got, c.want, c.in.Text())
			}
		})
	}
}

func TestInputTextSkipsRejectedReviewItems(t *testing.T) {
	in := Input{AgentError: "boom", Review: &state.ReviewResult{Comments: "two issues", Items: []state.ReviewItem{
		{Text: "wrong name", Verdict: state.VerdictImplement}, {Text: "bikeshed", Verdict: state.VerdictReject},
	}}}
	if got, want := in.Text(), "boom\ntwo issues\n- wrong name"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	c, err := Config{}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	if c.SimilarityThreshold != 0.8 || c.MinMessageLength != 30 || c.MaxReplansPerPhase != 1 || c.MaxReplansPerRun != 5 ||
		c.MaxDoctorCallsPerPhase != 2 || c.MaxDoctorCallsPerRun != 10 || c.MaxDoctorStrongPerRun != 5 ||
		c.MaxDoctorInfraPerRun != 3 || c.MinCheapConfidence != 0.7 || c.ReduceScopeBelow != 0.2 || c.EscalateAbove != 0.3 {
		t.Errorf("defaults not the seed's: %+v", c)
	}
	bad := []Config{
		{MaxDoctorCallsPerRun: -1},
		{SimilarityThreshold: 1.5},
		{TriggerThreshold: 1},
		{Fatal: []FatalRule{{Name: "test_failure", Pattern: "x"}}},
		{Fatal: []FatalRule{{Name: "Wrong Stack", Pattern: "x"}}},
		{Fatal: []FatalRule{{Name: "schema_mismatch", Pattern: "("}}},
		{Fatal: []FatalRule{{Name: "a", Pattern: "x"}, {Name: "a", Pattern: "y"}}},
	}
	for i, b := range bad {
		if _, err := b.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("case %d: Validate = %v, want ErrInvalidConfig", i, err)
		}
	}
}
