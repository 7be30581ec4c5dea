package cli

import (
	"strings"
	"testing"
)

const costScript = `developer:
  - phase: 1
    actions:
      - write: {path: a.txt, content: "a\n"}
    usage: {input_tokens: 1000, output_tokens: 200, cached_tokens: 500, cost_usd: 0.25}
  - phase: 2
    actions:
      - write: {path: b.txt, content: "b\n"}
    usage: {input_tokens: 3000, output_tokens: 600, cost_usd: 0.75}
reviewer:
  - phase: 1
    approved: true
    usage: {input_tokens: 100, output_tokens: 10, cost_usd: 0.01}
  - phase: 2
    approved: true
    usage: {input_tokens: 100, output_tokens: 10, cost_usd: 0.01}
`

// costRun runs halfPlan with costScript in a new demo repository as id,
// auto-approved, and returns the repository and the run's output.
func costRun(t *testing.T, id string) (dir, out string) {
	t.Helper()
	dir, _, _ = demoRepo(t)
	plan, script := planFiles(t, halfPlan, costScript)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	return dir, out
}

// TestRunEndStatusAndListShowCost: the end of a run prints tokens and cost
// per role and in total; status and list show the cost, and each phase's
// summary the cost so far.
func TestRunEndStatusAndListShowCost(t *testing.T) {
	t.Parallel()
	dir, out := costRun(t, "r-cost")
	want := `
Tokens and cost:
  role             input     output     cached       cost
  developer         4000        800        500    $1.0000
  reviewer           200         20          0    $0.0200
  total             4200        820        500    $1.0200

Run r-cost completed.`
	if !strings.Contains(out, want) {
		t.Fatalf("run's output lacks:%s\n---\n%s", want, out)
	}
	out, code := gaffer(t, "--repo", dir, "status")
	if code != 0 || !strings.Contains(out, "\ncost:      $1.0200 (4200 in, 820 out, 500 cached tokens)\n") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir)
	summary := gitOut(t, dir, "show", runRev(t, dir)+":"+v.ExecDir+"/phase-1/summary.md")
	if !strings.Contains(summary, "\nCost of the run so far: $0.2600 (1100 input, 210 output, 500 cached tokens)\n") {
		t.Fatalf("phase 1's summary:\n%s", summary)
	}
	out, code = gaffer(t, "--repo", dir, "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 3 || !strings.HasSuffix(lines[0], " COST") || !strings.HasSuffix(lines[1], " $1.0200") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
}

// TestStatusJSONHasTheCostTotal: status --json carries the run's total
// cost and tokens (cost_usd, input_tokens, output_tokens, cached_tokens)
// next to the per-role usage, as list --json does.
func TestStatusJSONHasTheCostTotal(t *testing.T) {
	t.Parallel()
	dir, _ := costRun(t, "r-total")
	out, code := gaffer(t, "--repo", dir, "status", "--json")
	start, end := strings.Index(out, `  "usage": {`), strings.Index(out, `  "checkpoint": `)
	if code != 0 || start < 0 || end < start {
		t.Fatalf("status --json: exit %d\n%s", code, out)
	}
	want := `  "usage": {
    "developer": {
      "input_tokens": 4000,
      "output_tokens": 800,
      "cached_tokens": 500,
      "cost_usd": 1
    },
    "reviewer": {
      "input_tokens": 200,
      "output_tokens": 20,
      "cost_usd": 0.02
    }
  },
  "cost_usd": 1.02,
  "input_tokens": 4200,
  "output_tokens": 820,
  "cached_tokens": 500,
`
	if got := out[start:end]; got != want {
		t.Fatalf("status --json's usage:\n%s\nwant:\n%s", got, want)
	}
	out, code = gaffer(t, "--repo", dir, "list", "--json")
	if code != 0 || !strings.Contains(out, "\n    \"cost_usd\": 1.02,\n    \"input_tokens\": 4200,\n") {
		t.Fatalf("list --json: exit %d\n%s", code, out)
	}
}
