package cli

import (
	"strings"
	"testing"
)

// hunkHeads drops the text after each hunk header's closing "@@" (git
// picks a function name there, go-git the line before the hunk).
func hunkHeads(d string) string {
	lines := strings.Split(d, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "@@ ") {
			if j := strings.Index(l[3:], " @@"); j >= 0 {
				lines[i] = l[:3+j+3]
			}
		}
	}
	return strings.Join(lines, "\n")
}

// TestDiffShowsWhatAPhaseCommitted: `gaffer diff RUN --phase N` prints
// phase N's change as `git diff --full-index PRE POST` does (hunk
// headings aside), without the execution directory unless --exec-dir; without
// --phase, every committed phase; a phase not committed yet is exit 8.
func TestDiffShowsWhatAPhaseCommitted(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-diff"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-diff")
	p3 := v.Phases[2]
	out, code := gaffer(t, "--repo", dir, "diff", "r-diff", "--phase", "3")
	header, body, _ := strings.Cut(out, "\n")
	wantHeader := "# run r-diff, phase 3 (attempt 1): git diff " + p3.PreCommit[:7] + " " + p3.PostCommit[:7] +
		" (without " + v.ExecDir + "; --exec-dir shows it)"
	if code != 0 || header != wantHeader {
		t.Fatalf("exit %d, header %q, want %q", code, header, wantHeader)
	}
	if want := gitOut(t, dir, "diff", "--full-index", p3.PreCommit, p3.PostCommit, "--", ".", ":(exclude)"+v.ExecDir) + "\n"; hunkHeads(body) != hunkHeads(want) {
		t.Fatalf("diff --phase 3:\n%s\nwant (git diff):\n%s", body, want)
	}
	out, _ = gaffer(t, "--repo", dir, "diff", "r-diff", "--phase", "3", "--exec-dir")
	if _, body, _ = strings.Cut(out, "\n"); hunkHeads(body) != hunkHeads(gitOut(t, dir, "diff", "--full-index", p3.PreCommit, p3.PostCommit)+"\n") {
		t.Fatalf("diff --exec-dir differs from git diff:\n%s", body)
	}
	out, _ = gaffer(t, "--repo", dir, "diff")
	if _, body, _ = strings.Cut(out, "\n"); hunkHeads(body) != hunkHeads(gitOut(t, dir, "diff", "--full-index", v.Phases[0].PreCommit, v.Phases[3].PostCommit, "--", ".", ":(exclude)"+v.ExecDir)+"\n") {
		t.Fatalf("diff of the whole run differs from git diff:\n%s", body)
	}
	if out, code := gaffer(t, "--repo", dir, "diff", "--phase", "5"); code != ExitUsage {
		t.Fatalf("--phase 5 of 4: exit %d\n%s", code, out)
	}

	// A run waiting for approval has committed nothing.
	dir2, plan2, script2 := demoRepo(t)
	if _, code := gaffer(t, "--repo", dir2, "run", "--plan", plan2, "--script", script2, "--run-id", "r-wait"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d", code)
	}
	if out, code := gaffer(t, "--repo", dir2, "diff", "r-wait"); code != ExitPrecondition || !strings.Contains(out, "run r-wait has committed no phase yet (awaiting_approval)") {
		t.Fatalf("diff of a waiting run: exit %d\n%s", code, out)
	}
}
