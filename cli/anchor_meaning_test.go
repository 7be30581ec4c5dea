package cli

import (
	"strings"
	"testing"
)

// Issue 33, through the binary: deferral read by meaning and by what the
// revised tasks promise, a split accepted, a test-helper refactor
// accepted, and the reviewer model's second opinion.

// calcFailing is a calculator run whose phase 2 fails twice alike, so
// recovery replans it with the replanner's answer; attempt 3's actions
// are attempt3. extra is appended to the script.
func calcFailing(answer, extra string, attempt3 ...string) string {
	return developerScript(passCalcPhase1,
		session(2, "attempt: 1", failPrintf(`--- FAIL: TestSub (0.00s)\n    calc_test.go:7: Sub(3, 1) = 4, want 2\nFAIL\n`)),
		session(2, "attempt: 2", failPrintf(`--- FAIL: TestSub (0.00s)\n    calc_test.go:9: Sub(3, 1) = 4, want 2\nFAIL\n`)),
		session(2, "attempt: 3", attempt3...),
	) + roleAnswer("replanner", "'"+answer+"'") + extra
}

// writeCalc writes calc.go with Add and Sub right.
const writeCalc = `write: {path: calc.go, content: "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"}`

// passCalcPhase1 is calcPlan's phase 1, scripted: it writes a calc_test.go
// with no test in it, and passes.
var passCalcPhase1 = session(1, "", `write: {path: calc_test.go, content: "package calc\n"}`)

// revision is a replanner's answer: an approach and tasks (JSON).
func revision(approach, tasks string) string {
	return `{"approach":"` + approach + `","tasks":[` + tasks + `]}`
}

const (
	taskAddAndSub = `{"id":"2","title":"Implement Add and Sub","type":"impl","description":"Implement Add and Sub in calc.go."}`
	taskAddOnly   = `{"id":"2","title":"Implement Add","type":"impl","description":"Implement Add in calc.go."}`
	taskSplitAdd  = `{"id":"2a","title":"Implement Add","type":"impl","files":["calc.go"],"description":"Implement Add in calc.go with plain integer arithmetic."}`
	taskSplitSub  = `{"id":"2b","title":"Implement Sub","type":"impl","files":["calc.go"],"description":"Implement Sub in calc.go; Sub(a, b) is a - b."}`
)

// Item 5: a revision that says a required function "lands in the next
// milestone" goes to the human, and so does one whose tasks no longer
// promise Sub although its approach uses words no list has.
func TestDeferralByMeaningGoesToTheHuman(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, answer string
		want         []string
	}{
		{"next milestone", revision("Get Add right now. Sub lands in the next milestone.", taskAddAndSub),
			[]string{`"Sub lands in the next milestone" puts off or weakens Sub (a later unit of work)`}},
		{"not promised by the tasks", revision("Sub arrives with the quarterly refresh.", taskAddOnly),
			[]string{"the name Sub that task 2 names is no longer required by the revised tasks: only the approach names it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, plan, sp := calcRepo(t, calcFailing(c.answer, "", writeCalc))
			out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-defer")
			if code != ExitAwaitingApproval || !strings.Contains(out, "narrowing_revision") {
				t.Fatalf("run: exit %d; want the revision sent to the human\n%s", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the question lacks %q\n%s", w, out)
				}
			}
		})
	}
}

// Item 7: a revision that splits the impl task in two, keeping Add, Sub
// and calc.go, runs on without a question; a split that leaves Sub out
// does not.
func TestSplitIsNotANarrowing(t *testing.T) {
	t.Parallel()
	dir, plan, sp := calcRepo(t, calcFailing(revision("Write Add and Sub one at a time.", taskSplitAdd+","+taskSplitSub), "", writeCalc))
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-split")
	if code != 0 || !strings.Contains(out, "replan:accepted") || strings.Contains(out, "narrowing") {
		t.Fatalf("run: exit %d; want the split accepted and the run completed without a question\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir, "r-split"); v.Status != "completed" {
		t.Fatalf("status %s, want completed", v.Status)
	}
	dir, plan, sp = calcRepo(t, calcFailing(revision("Write Add first.", taskSplitAdd), "", writeCalc))
	out, code = bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-split-sub")
	if code != ExitAwaitingApproval || !strings.Contains(out, "narrowing_revision") || !strings.Contains(out, "name Sub that task 2 names is no longer required") {
		t.Fatalf("run: exit %d; want the split that drops Sub refused\n%s", code, out)
	}
}

// Item 6: once recovery acted on the phase, its diff is judged from the
// test files; an attempt that turns four inline t.Fatalf into a helper
// taking testing.TB, called four times, keeps every assertion and the
// run completes without a question.
func TestTestHelperRefactorIsNotANarrowing(t *testing.T) {
	t.Parallel()
	const inline = `package calc\n\nimport \"testing\"\n\nfunc TestCalc(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatalf(\"Add\")\n\t}\n\tif Add(-1, -2) != -3 {\n\t\tt.Fatalf(\"Add\")\n\t}\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatalf(\"Sub\")\n\t}\n\tif Sub(1, 3) != -2 {\n\t\tt.Fatalf(\"Sub\")\n\t}\n}\n`
	const helper = `package calc\n\nimport \"testing\"\n\nfunc check(tb testing.TB, name string, got, want int) {\n\ttb.Helper()\n\tif got != want {\n\t\ttb.Fatalf(\"%s = %d, want %d\", name, got, want)\n\t}\n}\n\nfunc TestCalc(t *testing.T) {\n\tcheck(t, \"Add\", Add(1, 2), 3)\n\tcheck(t, \"Add\", Add(-1, -2), -3)\n\tcheck(t, \"Sub\", Sub(3, 1), 2)\n\tcheck(t, \"Sub\", Sub(1, 3), -2)\n}\n`
	script := strings.Replace(calcFailing(revision("Write Add and Sub with plain integer arithmetic.", taskAddAndSub), "",
		`write: {path: calc_test.go, content: "`+helper+`"}`, writeCalc),
		`write: {path: calc_test.go, content: "package calc\n"}`, `write: {path: calc_test.go, content: "`+inline+`"}`, 1)
	dir, plan, sp := calcRepo(t, script)
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-helper")
	if code != 0 || strings.Contains(out, "narrowing_change") || !strings.Contains(out, "[developer p2 a3 i1] write calc_test.go") {
		t.Fatalf("run: exit %d; want the helper refactor accepted without a question\n%s", code, out)
	}
	if got := gitOut(t, dir, "show", runRev(t, dir)+":calc_test.go"); !strings.Contains(got, "func check(tb testing.TB") {
		t.Fatalf("the committed test is not the refactored one:\n%s", got)
	}
}

// Item 8: with a reviewer model, a revision that passes the mechanical
// checks but rewrites the tasks is put to it; its no refuses the
// revision (the human is asked), its yes lets it stand; either way its
// answer is a decision record and its tokens are the run's.
func TestSecondOpinionOnARevision(t *testing.T) {
	t.Parallel()
	split := revision("Write Add and Sub one at a time.", taskSplitAdd+","+taskSplitSub)
	for _, c := range []struct {
		name, entry string
		code        int
		decision    string
	}{
		{"no", "  - {phase: 2, second_opinion: true, approved: false, comments: 'Sub as split returns the absolute difference, not a - b', usage: {input_tokens: 700, output_tokens: 50}}\n",
			ExitAwaitingApproval, "second_opinion:no"},
		{"yes", "  - {phase: 2, second_opinion: true, approved: true, comments: 'the split delivers Add and Sub as asked', usage: {input_tokens: 700, output_tokens: 50}}\n",
			0, "second_opinion:yes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, plan, sp := calcRepo(t, calcFailing(split, "reviewer:\n"+c.entry, writeCalc))
			commitConfig(t, dir, "profiles:\n  default:\n    roles:\n      reviewer: {model: rev-m}\n")
			out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-second")
			if code != c.code {
				t.Fatalf("run: exit %d, want %d\n%s", code, c.code, out)
			}
			v := statusJSON(t, "--repo", dir, "r-second")
			if u := v.Usage["reviewer"]; u.InputTokens < 700 {
				t.Errorf("the reviewer's usage %+v lacks the second opinion's 700 input tokens", u)
			}
			all := decisionTrail(t, dir, runRev(t, dir), v.ExecDir)
			if c.name == "no" {
				// The run waits: its records are not committed yet; the
				// question and status carry the answer.
				if !strings.Contains(out, "narrowing_revision") || !strings.Contains(out, "the reviewer model rev-m says the revision no longer delivers the goal: Sub as split returns the absolute difference") {
					t.Fatalf("run: want the revision refused with the reviewer's reason\n%s", out)
				}
				if v.Recovery == nil || v.Recovery.Last == nil || v.Recovery.Last.Decision != "replan:refused" {
					t.Fatalf("status recovery %+v; want the refusal last", v.Recovery)
				}
				out, code = bin(t, "--repo", dir, "approve", "r-second", "--decision", "stop")
				if code == 0 {
					t.Fatalf("approve --decision stop: exit 0\n%s", out)
				}
				all = decisionTrail(t, dir, runRev(t, dir), v.ExecDir)
			}
			if !strings.Contains(all, c.decision+"@the reviewer model rev-m says") {
				t.Errorf("decision records:\n%s\nwant %s with the reviewer's reason", all, c.decision)
			}
		})
	}
	// Without a reviewer model no one is asked: the split stands.
	dir, plan, sp := calcRepo(t, calcFailing(split, "reviewer:\n  - {phase: 2, second_opinion: true, approved: false, comments: never asked}\n", writeCalc))
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-no-model")
	if code != 0 || strings.Contains(out, "second_opinion") {
		t.Fatalf("run without a reviewer model: exit %d\n%s", code, out)
	}
}
