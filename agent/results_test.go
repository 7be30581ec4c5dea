package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

func TestParseReview(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   Review
	}{
		{
			name:   "bare",
			output: `{"approved": true, "comments": "fine"}`,
			want:   Review{Approved: true, Comments: "fine"},
		},
		{
			name: "fenced",
			output: "Here is my review.\n\n```json\n" +
				`{"approved": false, "comments": "Sub is wrong", "items": [{"text": "fix Sub", "disposition": "implement"}, {"text": "rename", "disposition": "DEFER", "reason": "later"}]}` +
				"\n```\nThanks.",
			want: Review{Comments: "Sub is wrong", Items: []ReviewItem{
				{Text: "fix Sub", Disposition: DispositionImplement},
				{Text: "rename", Disposition: DispositionDefer, Reason: "later"},
			}},
		},
		{
			name:   "prose with braces before and after",
			output: "I read func f() { return } and map{} literals.\n{\"approved\": false, \"comments\": \"a } in a string { is fine\"}\nDone {maybe}.",
			want:   Review{Comments: "a } in a string { is fine"},
		},
		{
			name:   "other JSON first",
			output: `Config was {"x": 1}. Verdict: {"approved": true, "comments": null, "items": null, "extra": [1,2]}`,
			want:   Review{Approved: true},
		},
		{
			name:   "reviewer leaves dispositions out",
			output: `{"approved": false, "items": [{"text": "add a test"}]}`,
			want:   Review{Items: []ReviewItem{{Text: "add a test"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseReview(tt.output)
			if err != nil {
				t.Fatalf("ParseReview: %v", err)
			}
			if got.Approved != tt.want.Approved || got.Comments != tt.want.Comments || !equalItems(got.Items, tt.want.Items) {
				t.Errorf("ParseReview = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseReviewErrors(t *testing.T) {
	tests := []struct {
		name, output string
		is           error
		mention      string
	}{
		{"empty", "", ErrNoJSON, "no JSON object"},
		{"prose only", "Looks good to me!", ErrNoJSON, "no JSON object"},
		{"broken JSON", `{"approved": true,}`, ErrNoJSON, "candidate"},
		{"missing approved", `{"comments": "ok"}`, ErrInvalidResult, `"approved" is required`},
		{"approved as string", `{"approved": "yes"}`, ErrInvalidResult, `"approved" must be a boolean, got "yes"`},
		{"comments as list", `{"approved": true, "comments": ["a"]}`, ErrInvalidResult, `"comments" must be a string`},
		{"items as object", `{"approved": true, "items": {"text": "a"}}`, ErrInvalidResult, `"items" must be an array`},
		{"item as string", `{"approved": true, "items": ["fix it"]}`, ErrInvalidResult, `items[0] must be an object`},
		{"item without text", `{"approved": true, "items": [{"disposition": "DEFER"}]}`, ErrInvalidResult, `items[0]`},
		{"bad disposition", `{"approved": true, "items": [{"text": "a", "disposition": "MAYBE"}]}`, ErrInvalidResult, `"MAYBE"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseReview(tt.output)
			if !errors.Is(err, tt.is) {
				t.Fatalf("ParseReview(%q) = %v, want %v", tt.output, err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestReviewJSONRoundTrip(t *testing.T) {
	r := Review{Comments: `quotes " and <html> & braces {}`, Items: []ReviewItem{{Text: "x", Disposition: DispositionReject, Reason: "wrong"}}}
	got, err := ParseReview("prefix " + r.JSON() + " suffix")
	if err != nil {
		t.Fatal(err)
	}
	if got.Comments != r.Comments || !equalItems(got.Items, r.Items) || got.Approved {
		t.Errorf("round trip = %+v, want %+v", got, r)
	}
}

func TestParseEvaluation(t *testing.T) {
	got, err := ParseEvaluation("```json\n" + `{"items": [{"text": "a", "disposition": "reject", "reason": "wrong"}]}` + "\n```")
	if err != nil {
		t.Fatal(err)
	}
	want := []ReviewItem{{Text: "a", Disposition: DispositionReject, Reason: "wrong"}}
	if !equalItems(got.Items, want) {
		t.Errorf("items = %+v, want %+v", got.Items, want)
	}
	if _, err := ParseEvaluation(`{"items": [{"text": "a"}]}`); !errors.Is(err, ErrInvalidResult) {
		t.Errorf("missing disposition: err = %v, want ErrInvalidResult", err)
	}
	if _, err := ParseEvaluation(`{"approved": true}`); !errors.Is(err, ErrInvalidResult) {
		t.Errorf("no items: err = %v, want ErrInvalidResult", err)
	}
	empty, err := ParseEvaluation(Evaluation{}.JSON())
	if err != nil || len(empty.Items) != 0 {
		t.Errorf("empty evaluation = %+v, %v", empty, err)
	}
}

func TestExtractPlan(t *testing.T) {
	plan := "# Goal\n\n### Task 1: Add\n- type: test\n\n```go\nfunc Add() {}\n```\n"
	tests := []struct {
		name, output, want string
	}{
		{"plain", "\n" + plan + "\n\n", strings.TrimSpace(plan)},
		{"markdown fence", "```markdown\n" + plan + "```\n", strings.TrimSpace(plan)},
		{"md fence", "```md\n# Goal\n```", "# Goal"},
		{"bare fence without inner fences", "```\n# Goal\n### Task 1: x\n```", "# Goal\n### Task 1: x"},
		{"bare fence with inner fences is left alone", "```\nfoo\n```\n\n### Task 1: x\n```\nbar\n```", "```\nfoo\n```\n\n### Task 1: x\n```\nbar\n```"},
		{"go fence is not a plan fence", "```go\nx\n```", "```go\nx\n```"},
		{"unclosed fence", "```markdown\n# Goal", "```markdown\n# Goal"},
		{"empty fence", "```markdown\n```", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExtractPlan(tt.output); got != tt.want {
				t.Errorf("ExtractPlan(%q) = %q, want %q", tt.output, got, tt.want)
			}
		})
	}
}

func TestUsageAndKinds(t *testing.T) {
	u := state.Usage{InputTokens: 1, OutputTokens: 2, CachedTokens: 3, CostUSD: 0.5}.Add(state.Usage{InputTokens: 10, CostUSD: 0.25})
	if u != (state.Usage{InputTokens: 11, OutputTokens: 2, CachedTokens: 3, CostUSD: 0.75}) {
		t.Errorf("Add = %+v", u)
	}
	for k, want := range map[MessageKind]string{Text: "text", ToolCall: "tool_call", ToolResult: "tool_result", UsageUpdate: "usage", 9: "MessageKind(9)"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), want)
		}
	}
}

func FuzzParseReview(f *testing.F) {
	for _, seed := range []string{
		"",
		`{"approved": true}`,
		"```json\n{\"approved\": false, \"items\": [{\"text\": \"a\", \"disposition\": \"DEFER\"}]}\n```",
		`{{{{"approved": "x"}}}}`,
		`{"a": "\"}"} {"approved": true, "comments": "\u00e9"}`,
		`{"approved": true, "items": [null, 1, {"text": 2}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReview(s)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) && !errors.Is(err, ErrInvalidResult) {
				t.Fatalf("ParseReview(%q): unexpected error kind %v", s, err)
			}
			return
		}
		// What parses must survive a round trip through the driver's own encoding.
		again, err := ParseReview(r.JSON())
		if err != nil {
			t.Fatalf("round trip of %+v: %v", r, err)
		}
		if again.Approved != r.Approved || again.Comments != r.Comments || !equalItems(again.Items, r.Items) {
			t.Fatalf("round trip of %+v gave %+v", r, again)
		}
		_, _ = ParseEvaluation(s)
		_ = ExtractPlan(s)
	})
}

func equalItems(a, b []ReviewItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
