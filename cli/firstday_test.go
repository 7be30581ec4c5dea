package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// newcomer is the shell of a newcomer's first day: a home directory of
// its own, gaffer on PATH only once it is installed there, and commands
// typed as a shell runs them.
type newcomer struct {
	t    *testing.T
	home string
	env  []string
}

// newNewcomer is a newcomer in a new home: no gaffer on PATH, no GAFFER_
// variable, go's build cache and modules the test's own (so that the
// first build is as quick as the test's), a git identity for their own
// commits.
func newNewcomer(t *testing.T) *newcomer {
	home := t.TempDir()
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "gaffer")); err != nil {
			path = append(path, d)
		}
	}
	n := &newcomer{t: t, home: home}
	for _, kv := range os.Environ() {
		// A newcomer's shell is not inside a make: when the suite runs under
		// make test, MAKELEVEL would turn the newcomer's make into a sub-make
		// that prints "Entering directory".
		k, _, _ := strings.Cut(kv, "=")
		underMake := strings.HasPrefix(k, "MAKE") || k == "MFLAGS"
		if !strings.HasPrefix(k, "GAFFER_") && !underMake && k != "PATH" && k != "TMPDIR" && k != "GOBIN" {
			n.env = append(n.env, kv)
		}
	}
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	n.env = append(n.env, "PATH="+strings.Join(path, string(filepath.ListSeparator)), "TMPDIR="+tmp,
		"GOBIN="+filepath.Join(home, "go", "bin"), "TERM=dumb",
		"GIT_AUTHOR_NAME=New Comer", "GIT_AUTHOR_EMAIL=new@example.com", "GIT_COMMITTER_NAME=New Comer", "GIT_COMMITTER_EMAIL=new@example.com")
	return n
}

// onPath puts dir first on the newcomer's PATH.
func (n *newcomer) onPath(dir string) {
	for i, kv := range n.env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			n.env[i] = "PATH=" + dir + string(filepath.ListSeparator) + p
		}
	}
}

// typed runs line as the newcomer's shell would, in dir, and returns
// what it printed (stdout and stderr) and its exit code.
func (n *newcomer) typed(dir, line string) (string, int) {
	n.t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, n.env
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		n.t.Fatalf("$ %s: %v", line, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// must is typed, failing the test on an exit code other than want.
func (n *newcomer) must(dir, line string, want int) string {
	n.t.Helper()
	out, code := n.typed(dir, line)
	if code != want {
		n.t.Fatalf("$ %s (in %s): exit %d, want %d\n%s", line, dir, code, want, out)
	}
	return out
}

// suggested is every gaffer command out suggests, in order: a command
// name after gaffer (or ./bin/gaffer), with --repo, RUN and its flags.
var suggested = regexp.MustCompile(`(?:\./bin/)?gaffer(?: --repo \S+)? (?:plan show|approve|reject|resume|status|list|merge|delete|prune|logs|diff|install)(?: (?:r-[0-9a-z-]+|RUN|--[a-z-]+(?: "…")?))*`)

// suggestions are out's suggested commands.
func suggestions(out string) []string { return suggested.FindAllString(out, -1) }

// checkSuggests checks that out suggests exactly want, in that order.
func checkSuggests(t *testing.T, what, out string, want ...string) {
	t.Helper()
	if got := suggestions(out); !slices.Equal(got, want) {
		t.Errorf("%s suggests\n  %q\nwant\n  %q\nin\n%s", what, got, want, out)
	}
}

// firstDayPlan and firstDayScript are the newcomer's first run on a
// third-party module: a test of Comma, then Comma, with go test run.
const firstDayPlan = `# Plan: Comma

### Task 1: Test Comma
- type: test
- depends on: none
- files: comma_test.go

Test that Comma(1234567) is "1,234,567".

### Task 2: Write Comma
- type: impl
- depends on: 1
- files: comma.go

Write Comma, which puts commas between thousands.
`

const firstDayScript = `developer:
  - phase: 1
    summary: wrote the test of Comma
    actions:
      - write:
          path: comma_test.go
          content: "package humanize\n\nimport \"testing\"\n\nfunc TestComma(t *testing.T) {\n\tif got := Comma(1234567); got != \"1,234,567\" {\n\t\tt.Fatal(got)\n\t}\n}\n"
  - phase: 2
    summary: wrote Comma
    actions:
      - write:
          path: comma.go
          content: "package humanize\n\nimport \"strconv\"\n\n// Comma formats n with commas between thousands.\nfunc Comma(n int) string {\n\ts := strconv.Itoa(n)\n\tfor i := len(s) - 3; i > 0; i -= 3 {\n\t\ts = s[:i] + \",\" + s[i:]\n\t}\n\treturn s\n}\n"
      - run: go test ./...
`

// TestFirstDay is a newcomer's first day (issue 35), as one walk: clone
// gaffer, make demo, install, run on a third-party repository (a Go
// module of theirs), approve, status, merge, delete, prune. Every line
// that tells the newcomer what to do next names the right command, and
// every command suggested is typed as shown, and works.
func TestFirstDay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gaffer from a clone and runs it")
	}
	t.Parallel()
	// The test's own build of gaffer (gafferBinary) has make build's
	// flags: the clone's build below finds every package in go's cache.
	gafferBinary(t)
	n := newNewcomer(t)
	src := gitOut(t, "..", "rev-parse", "--show-toplevel")
	clone := filepath.Join(n.home, "src", "gaffer")

	// Clone and make demo: the build says what it does, the demo's
	// commands name ./bin/gaffer (gaffer is not on PATH) and say how to
	// install it; its merge command works as typed, from the clone.
	n.must(n.home, "git clone -q "+src+" "+clone, 0)
	out := n.must(clone, "make demo", 0)
	if first, _, _ := strings.Cut(out, "\n"); first != "building gaffer into bin/gaffer (first time: about a minute)…" {
		t.Errorf("make demo's first line: %q", first)
	}
	demoDir := regexp.MustCompile(`(?m)^Demo repository: (\S+)$`).FindStringSubmatch(out)
	demoRun := regexp.MustCompile(`(?m)^Run (r-\S+) started`).FindStringSubmatch(out)
	if demoDir == nil || demoRun == nil {
		t.Fatalf("make demo names no repository or run:\n%s", out)
	}
	demoMerge := "./bin/gaffer --repo " + demoDir[1] + " merge " + demoRun[1]
	wantEnd := "Take its work into main with:\n\n  " + demoMerge + "\n\n" +
		"gaffer is not on your PATH, so these commands name ./bin/gaffer; make install, in " + clone + ", puts it in $(go env GOPATH)/bin.\n"
	if !strings.HasSuffix(out, wantEnd) {
		t.Errorf("make demo ends\n%s\nwant it to end\n%s", out[max(0, len(out)-600):], wantEnd)
	}
	for _, c := range suggestions(out) {
		if !strings.HasPrefix(c, "./bin/gaffer ") {
			t.Errorf("make demo suggests %q, which does not work: gaffer is not on PATH", c)
		}
	}
	if got := n.must(clone, demoMerge, 0); !strings.Contains(got, "Fast-forwarded main to gaffer/"+demoRun[1]) {
		t.Errorf("$ %s:\n%s", demoMerge, got)
	}

	// Install: gaffer is on PATH.
	n.must(clone, "make install", 0)
	n.onPath(filepath.Join(n.home, "go", "bin"))
	if got := n.must(n.home, "gaffer --version", 0); !strings.HasPrefix(got, "gaffer version ") {
		t.Errorf("gaffer --version: %q", got)
	}

	// A third-party repository: a Go module with one commit.
	repo := filepath.Join(n.home, "src", "humanize")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"go.mod":      "module example.com/humanize\n\ngo 1.21\n",
		"humanize.go": "// Package humanize formats numbers for people.\npackage humanize\n",
		"README.md":   "# humanize\n",
	} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n.must(repo, "git init -q -b main && git add -A && git commit -qm 'humanize: first'", 0)
	plans := filepath.Join(n.home, "plans")
	if err := os.Mkdir(plans, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"comma.md": firstDayPlan, "comma.yaml": firstDayScript} {
		if err := os.WriteFile(filepath.Join(plans, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Run: it says where its work goes, and waits for approval with the
	// commands that read, approve or reject the plan.
	out = n.must(repo, "gaffer run --plan ../../plans/comma.md --script ../../plans/comma.yaml", ExitAwaitingApproval)
	m := regexp.MustCompile(`(?m)^Run (r-\S+) started`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("run names no run:\n%s", out)
	}
	id := m[1]
	checkSuggests(t, "run", out, "gaffer merge "+id, "gaffer plan show "+id, "gaffer approve "+id, `gaffer reject `+id+` --feedback "…"`)
	if !strings.Contains(out, "\nIts work goes to branch gaffer/"+id+" (work tree ") || !strings.Contains(out, "gaffer: run "+id+" is waiting for approval") {
		t.Errorf("run:\n%s", out)
	}
	if got := n.must(repo, "gaffer plan show "+id, 0); !strings.Contains(got, "Test Comma") || !strings.Contains(got, "Write Comma") {
		t.Errorf("plan show:\n%s", got)
	}

	// Approve: the run completes, and says where its commits are.
	out = n.must(repo, "gaffer approve "+id, 0)
	if !strings.Contains(out, "\nRun "+id+" completed.") || !strings.Contains(out, "ok  \texample.com/humanize") {
		t.Errorf("approve:\n%s", out)
	}
	checkSuggests(t, "approve", out, "gaffer merge "+id)

	// Status and list: the merge command, and list's footnote.
	out = n.must(repo, "gaffer status", 0)
	if !strings.Contains(out, "status:    completed\n") || !strings.Contains(out, "\nmerge:     gaffer merge "+id+" (takes its work into your current branch)\n") {
		t.Errorf("status:\n%s", out)
	}
	checkSuggests(t, "status", out, "gaffer merge "+id)
	out = n.must(repo, "gaffer list", 0)
	if !strings.Contains(out, id+"  completed  2/2") || !strings.Contains(out, "unmerged: gaffer/"+id+" · Comma") {
		t.Errorf("list:\n%s", out)
	}
	checkSuggests(t, "list", out, "gaffer merge RUN")

	// Merge, typed as status showed it: main has Comma and its test, and
	// go test passes there; then the branch's deletion is suggested.
	out = n.must(repo, "gaffer merge "+id, 0)
	if !strings.Contains(out, "Fast-forwarded main to gaffer/"+id) {
		t.Errorf("merge:\n%s", out)
	}
	checkSuggests(t, "merge", out, "gaffer delete "+id)
	n.must(repo, "go test ./...", 0)
	out = n.must(repo, "gaffer status "+id, 0)
	if strings.Contains(out, "merge:") || len(suggestions(out)) != 0 {
		t.Errorf("status of a merged run still suggests a command:\n%s", out)
	}

	// Delete and prune: nothing is left, and nothing more is suggested.
	out = n.must(repo, "gaffer delete "+id, 0)
	if want := "Deleted run " + id + ".\nDeleted branch gaffer/" + id + ": its commits are merged.\n"; out != want {
		t.Errorf("delete: %q, want %q", out, want)
	}
	checkSuggests(t, "delete", out)
	out = n.must(repo, "gaffer prune", 0)
	checkSuggests(t, "prune", out)
	if out = n.must(repo, "gaffer list", 0); strings.Contains(out, id) {
		t.Errorf("list after delete and prune:\n%s", out)
	}
	if got := gitOut(t, repo, "branch", "--list", "gaffer/*"); got != "" {
		t.Errorf("branches left: %q", got)
	}
	if got := gitOut(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("the newcomer's checkout is not clean: %q", got)
	}
}

// TestMakeBuildShowsProgress (issue 35 item 2): make build says what it
// does before go build starts, then a line per 50 packages go compiles,
// passes go's other lines through (downloads, errors) and exits as go
// did. A fake go stands for the compiler: the Makefile's own recipe runs.
func TestMakeBuildShowsProgress(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "go")
	var pkgs strings.Builder
	for i := 1; i <= 120; i++ {
		pkgs.WriteString("example.com/m/p" + strings.Repeat("x", i%3) + "/" + string(rune('a'+i%26)) + "\n")
	}
	script := "#!/bin/sh\necho 'go: downloading example.com/dep v1.0.0' >&2\ncat <<'EOF' >&2\n" + pkgs.String() + "EOF\n" +
		"[ -n \"$FAIL\" ] && { echo './x.go:1:1: syntax error' >&2; exit 3; }\nexit 0\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	build := func(env ...string) (string, int) {
		cmd := exec.Command("make", "-s", "-C", "..", "build", "GO="+fake, "BIN="+filepath.Join(dir, "gaffer"))
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	lines := strings.Split(pkgs.String(), "\n")
	want := "building gaffer into " + filepath.Join(dir, "gaffer") + " (first time: about a minute)…\n" +
		"go: downloading example.com/dep v1.0.0\n" +
		"  50 packages compiled (" + lines[49] + ")\n" +
		"  100 packages compiled (" + lines[99] + ")\n" +
		"  120 packages compiled: " + filepath.Join(dir, "gaffer") + " is ready\n"
	if out, code := build(); code != 0 || out != want {
		t.Errorf("make build: exit %d\n%s\nwant exit 0 and\n%s", code, out, want)
	}
	out, code := build("FAIL=1")
	if code == 0 || !strings.Contains(out, "./x.go:1:1: syntax error\n") || strings.Contains(out, "is ready") {
		t.Errorf("make build with go failing: exit %d\n%s", code, out)
	}
}
