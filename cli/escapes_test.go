package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/fakeresponses"
)

// These tests are issue 30's "secrets and escapes", through the gaffer
// binary, written as the attacks: an agent that rewrites its work tree's
// .git, plants symbolic links in the execution directory, reads other
// processes' command lines and signals them, leaves setsid processes
// behind, and rewrites the Go module cache.

// secretEnv is what gaffer's environment holds besides the test's: two
// secrets an agent must never get, through gaffer's git or otherwise.
func secretEnv() []string {
	return []string{"AWS_SECRET_ACCESS_KEY=aws-escapes-canary-1f3", "GITHUB_TOKEN=ghp-escapes-canary-9c2"}
}

// binRun runs the gaffer binary in dir (the repository) with args,
// gaffer's environment this process's plus env; with a wrapper (see
// noNamespaces) the binary runs under it. It returns the output and the
// exit code.
func binRun(t *testing.T, bin string, wrapper []string, env []string, args ...string) (string, int) {
	t.Helper()
	argv := append(append(append([]string{}, wrapper...), bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("gaffer %v: %v", args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// noNamespaces returns the wrapper that runs gaffer where the kernel
// refuses new namespaces of kind (mnt, pid): in a user namespace of its
// own whose user.max_KIND_namespaces is 0, as an administrator can set it.
// The test is skipped where that cannot be made.
func noNamespaces(t *testing.T, kind string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("namespaces are Linux only")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1)")
	}
	w := []string{unshare, "-Ur", "sh", "-c", "echo 0 > /proc/sys/user/max_" + kind + "_namespaces && exec \"$0\" \"$@\""}
	if out, err := exec.Command(w[0], append(w[1:], "true")...).CombinedOutput(); err != nil {
		t.Skipf("cannot refuse %s namespaces here: %v %s", kind, err, out)
	}
	return w
}

// templateRepo makes a repository whose gaffer.yaml runs the developer
// as a CLI agent, the shell script dev (a template agent), and every
// other role on the script driver, with attempts as the phase's limit.
// It returns the repository, and the plan and script files for `run`.
func templateRepo(t *testing.T, dev string, attempts int) (dir, plan, script string) {
	t.Helper()
	aux := t.TempDir()
	agent := filepath.Join(aux, "dev.sh")
	writeTestFile(t, agent, dev)
	profile := `default_profile: t
profiles:
  t:
    driver: script
    roles:
      developer: {driver: cli, agent: dev}
    agents:
      dev:
        command: [sh, ` + strconv.Quote(agent) + `]
        prompt: stdin
        output: text
    limits: {max_task_review_iterations: 1, max_phase_attempts: ` + strconv.Itoa(attempts) + `}
    tdd: false
`
	dir = greetRepo(t, map[string]string{"gaffer.yaml": profile})
	plan, script = filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
	writeTestFile(t, plan, "# Plan\n\n### Task 1: Add a note\n\nWrite note.txt.\n")
	writeTestFile(t, script, "reviewer:\n  - approved: true\n    comments: fine\n")
	return dir, plan, script
}

// gitFileAttack is the agent's side of issue 30's first attack, as shell:
// a git directory of its own in the work tree, with the work tree's files
// in its index and a clean filter (which `git status` runs on a file
// whose stat changed) that writes marker, outside the sandbox, with the
// environment of git's parent, gaffer; then the work tree's .git names
// it, and a file's time changes. It prints "rewrote .git", or why not.
func gitFileAttack(marker string) string {
	return `git init -q --bare .evil && git --git-dir=.evil config core.bare false
git --git-dir=.evil --work-tree=. add -A
git --git-dir=.evil config filter.x.clean "sh -c 'echo ran >> ` + marker + `; tr \"\\\\0\" \"\\\\n\" < /proc/\$(ps -o ppid= -p \$PPID | tr -d \" \")/environ >> ` + marker + `; cat'"
mkdir -p .evil/info && echo '* filter=x' > .evil/info/attributes
if { echo "gitdir: $PWD/.evil" > .git; } 2>/dev/null; then echo "rewrote .git"; else echo "could not rewrite .git"; fi
touch -d '+1 hour' doc.go
echo "a note" > note.txt
`
}

// checkNothingLeaked fails when the planted filter ran, or when a secret
// of gaffer's environment is anywhere it wrote.
func checkNothingLeaked(t *testing.T, marker string, outputs ...string) {
	t.Helper()
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the planted filter ran outside the sandbox:\n%s", b)
	}
	for _, o := range outputs {
		for _, kv := range secretEnv() {
			if _, v, _ := strings.Cut(kv, "="); strings.Contains(o, v) {
				t.Errorf("a secret of gaffer's environment leaked:\n%s", o)
			}
		}
	}
}

// TestTemplateAgentCannotPlantAGitFile is issue 30, item 1, with a
// template agent. Confined, the agent cannot rewrite its work tree's .git
// (read-only for it): the run completes and nothing planted runs. Where
// the kernel refuses the mount namespace that makes it read-only, the
// rewrite lands, but gaffer's own git after the session runs on the git
// directory it made, so the filter never runs and gaffer's secrets stay
// its own; the run stops naming .git and how to put it back, and, put
// back and resumed, stops the same way when the fresh session plants it
// again.
func TestTemplateAgentCannotPlantAGitFile(t *testing.T) {
	bin := gafferBinary(t)
	for _, c := range []struct {
		name    string
		wrapper func(*testing.T) []string
	}{
		{"confined", func(*testing.T) []string { return nil }},
		{"no mount namespace", func(t *testing.T) []string { return noNamespaces(t, "mnt") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wrapper := c.wrapper(t)
			marker := filepath.Join(t.TempDir(), "filter-ran")
			dir, plan, script := templateRepo(t, "cat > /dev/null\n"+gitFileAttack(marker)+"echo done\n", 1)
			out, code := binRun(t, bin, wrapper, secretEnv(), "--repo", dir, "run", "--plan", plan, "--script", script,
				"--auto-approve", "--run-id", "r-gitfile")
			checkNothingLeaked(t, marker, out)
			if wrapper == nil {
				if code != 0 {
					t.Fatalf("run: exit %d\n%s", code, out)
				}
				if got := gitOut(t, dir, "show", "gaffer/r-gitfile:note.txt"); got != "a note" {
					t.Errorf("note.txt on the run's branch: %q", got)
				}
				return
			}
			if code != ExitPrecondition || !strings.Contains(out, "git settings changed") || !strings.Contains(out, ".git") {
				t.Fatalf("run: exit %d, want %d naming .git\n%s", code, ExitPrecondition, out)
			}
			i := strings.Index(out, "git cat-file -p ")
			if i < 0 {
				t.Fatalf("no fix in the output:\n%s", out)
			}
			fix := strings.TrimSpace(strings.SplitN(out[i:], ")", 2)[0])
			if !strings.Contains(fix, "/.git") {
				t.Fatalf("the fix %q does not put .git back", fix)
			}
			fixCmd := exec.Command("sh", "-c", fix)
			fixCmd.Dir = dir
			if b, err := fixCmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", fix, err, b)
			}
			// Resumed, the phase starts a fresh session, which plants
			// again: stopped again, and again nothing runs.
			out, code = binRun(t, bin, wrapper, secretEnv(), "--repo", dir, "resume")
			checkNothingLeaked(t, marker, out)
			if code != ExitPrecondition || !strings.Contains(out, "git settings changed during the run: .git;") {
				t.Fatalf("resume once .git is back: exit %d\n%s", code, out)
			}
		})
	}
}

// linkAttack is the agent's side of issue 30's second attack: in every
// execution directory, make what (phase-1, story, or the directory itself)
// a symbolic link to target.
func linkAttack(what, target string) string {
	plant := map[string]string{
		"phase-1":       `ln -s "$T" "$d/phase-1"`,
		"story":         `rm -rf "$d/story"; ln -s "$T" "$d/story"`,
		"the directory": `rm -rf "$d"; ln -s "$T" "$d"`,
	}[what]
	return `T=` + strconv.Quote(target) + `; for d in docs/gaffer/*; do ` + plant + `; done`
}

// TestPlantedLinksStopTheRun is issue 30, item 2: phase 1's developer
// makes phase-1, story, or the execution directory a link — in a run's
// own work tree to the user's checkout, which holds an untracked plan.md
// of the user's; in place to .git. gaffer's next write there stops the
// run with the link named and how to remove it, and nothing lands where
// it points.
func TestPlantedLinksStopTheRun(t *testing.T) {
	bin := gafferBinary(t)
	for _, m := range runModes {
		for _, what := range []string{"phase-1", "story", "the directory"} {
			t.Run(m.name+"/"+what, func(t *testing.T) {
				t.Parallel()
				dir, _, _ := demoRepo(t)
				aux := t.TempDir()
				plan, script := filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
				writeTestFile(t, plan, "# Links\n\n### Task 1: One\n\nWrite one.txt.\n\n### Task 2: Two\n\nWrite two.txt.\n")
				target := dir // the user's checkout
				if m.inPlace {
					target = filepath.Join(dir, ".git")
				}
				writeTestFile(t, script, `developer:
  - phase: 1
    actions:
      - write: {path: one.txt, content: "one\n"}
      - run: '`+linkAttack(what, target)+`'
    decisions: [{topic: layout, what: one file, why: small}]
  - phase: 2
    actions:
      - write: {path: two.txt, content: "two\n"}
reviewer:
  - approved: true
    comments: fine
`)
				args := []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-links"}
				if m.inPlace {
					args = append(args, "--in-place")
				} else {
					writeTestFile(t, filepath.Join(dir, "plan.md"), "the user's own plan\n")
				}
				before := lsTree(t, target)
				out, code := binRun(t, bin, nil, nil, args...)
				if code == 0 || !strings.Contains(out, "is a symbolic link to "+target) || !strings.Contains(out, "remove it (rm ") {
					t.Fatalf("run: exit %d, want it stopped naming the link to %s\n%s", code, target, out)
				}
				if after := lsTree(t, target); after != before {
					t.Errorf("gaffer wrote through the link into %s:\nbefore\n%s\nafter\n%s", target, before, after)
				}
				if !m.inPlace {
					if b, _ := os.ReadFile(filepath.Join(dir, "plan.md")); string(b) != "the user's own plan\n" {
						t.Errorf("the user's plan.md is now %q", b)
					}
				}
			})
		}
	}
}

// lsTree lists the execution directory's files (plan.md, summary.md, a
// story record…) directly in dir and in its phase-1 and story, with
// their sizes: what a write through a link would add or change.
func lsTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	execFile := func(name string) bool {
		switch name {
		case "plan.md", "execution-state.json", "summary.md", "review-feedback.md":
			return true
		}
		return strings.HasSuffix(name, ".json") && len(name) > 4 && strings.Trim(name[:3], "0123456789") == ""
	}
	for _, d := range []string{dir, filepath.Join(dir, "phase-1"), filepath.Join(dir, "story")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && !e.IsDir() && execFile(e.Name()) {
				b.WriteString(filepath.Join(d, e.Name()) + " " + strconv.FormatInt(fi.Size(), 10) + "\n")
			}
		}
	}
	return b.String()
}

// escapingAgent is a template agent that attacks what lies outside its
// session: it records every command line it can read (victim's token is
// in one), sends SIGSTOP and SIGKILL to every process it can see whose
// command line names bin (gaffer: this test's own binary, so that a
// failure hits nothing of anyone else's) or the victim, and to its
// parent, then leaves setsid processes behind, each with marker in its
// command line: one writing into the work tree (escaped.txt) every 10 ms,
// one a double fork, one holding its output; and exits.
func escapingAgent(bin, marker string) string {
	return `cat > /dev/null
cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ' > seen.txt
for p in /proc/[0-9]*; do
  if grep -q -e ` + strconv.Quote(bin) + ` -e ghp-cmdline-canary-5d1 "$p/cmdline" 2>/dev/null; then
    kill -STOP "${p#/proc/}" 2>/dev/null; kill -9 "${p#/proc/}" 2>/dev/null
  fi
done
kill -9 $PPID 2>/dev/null
setsid sh -c 'while :; do echo x >> escaped.txt; sleep 0.01; done' ` + marker + ` </dev/null >/dev/null 2>&1 &
(setsid sleep ` + marker + ` </dev/null >/dev/null 2>&1 &)
setsid sleep ` + marker + ` &
sleep 0.3
echo "a note" > note.txt
echo done
`
}

// startVictim starts a process of the user's, outside gaffer, with a
// token in its command line.
func startVictim(t *testing.T) *exec.Cmd {
	t.Helper()
	v := exec.Command("sh", "-c", "sleep 600", "victim", "--token=ghp-cmdline-canary-5d1")
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Process.Kill(); _ = v.Wait() })
	return v
}

// checkNoSurvivors fails when a process with marker as an argument is
// alive, or when writes (unless "") still grows, once the run has ended.
func checkNoSurvivors(t *testing.T, marker, writes string) {
	t.Helper()
	for _, pid := range findProcesses("\x00" + marker + "\x00") {
		t.Errorf("process %d of the session outlived it", pid)
		_ = syscallKill(pid)
	}
	if writes == "" {
		return
	}
	size := fileSize(writes)
	if size <= 0 {
		t.Fatalf("the setsid writer never wrote: the test proves nothing")
	}
	time.Sleep(100 * time.Millisecond)
	if got := fileSize(writes); got != size {
		t.Errorf("something the session left still writes: %d bytes, then %d", size, got)
	}
}

// TestAgentSeesOnlyItsOwnProcessesAndLeavesNothing is issue 30, items 3
// and 4, with a template agent, in place and in a run's own work tree:
// it reads no other program's command line, stops and kills neither
// gaffer nor the other program, and nothing it left behind (setsid, a
// double fork, a writer into the tree) outlives the session; the run
// completes. Where the kernel refuses a PID namespace, the run's start
// line and `gaffer config show` say so, and still nothing survives and
// nothing outside is signalled.
func TestAgentSeesOnlyItsOwnProcessesAndLeavesNothing(t *testing.T) {
	bin := gafferBinary(t)
	cases := []struct {
		name    string
		mode    runMode
		wrapper func(*testing.T) []string
	}{
		{"in place", runModes[0], func(*testing.T) []string { return nil }},
		{"own work tree", runModes[1], func(*testing.T) []string { return nil }},
		{"own work tree, no PID namespace", runModes[1], func(t *testing.T) []string { return noNamespaces(t, "pid") }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wrapper := c.wrapper(t)
			v := startVictim(t)
			marker := strconv.Itoa(3100 + os.Getpid()%500 + i)
			dir, plan, script := templateRepo(t, escapingAgent(bin, marker), 1)
			out, code := binRun(t, bin, wrapper, nil, c.mode.args("--repo", dir, "run", "--plan", plan, "--script", script,
				"--auto-approve", "--run-id", "r-escape")...)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			refused := strings.Contains(out, "agents get no PID namespace of their own")
			if refused != (wrapper != nil) {
				t.Errorf("the start line says the PID namespace is refused: %v; want %v\n%s", refused, wrapper != nil, out)
			}
			if show, _ := binRun(t, bin, wrapper, nil, "--repo", dir, "config", "show"); strings.Contains(show, "# agents get no PID namespace") != (wrapper != nil) {
				t.Errorf("config show does not say what the kernel refuses:\n%s", show)
			}
			seen := gitOut(t, dir, "show", c.mode.rev("r-escape")+":seen.txt")
			if wrapper == nil && strings.Contains(seen, "ghp-cmdline-canary-5d1") {
				t.Errorf("the agent read another program's command line:\n%s", seen)
			}
			if st := procState(v.Process.Pid); st != "S" && st != "R" {
				t.Errorf("the other program is %q after the run, want it running", st)
			}
			checkNoSurvivors(t, marker, writesIn(c.mode, dir))
		})
	}
}

// writesIn is the file the escaped writer appends to that can be watched
// after the run: the checkout's in place; none where the run's work tree
// is removed at its end.
func writesIn(m runMode, dir string) string {
	if m.inPlace {
		return filepath.Join(dir, "escaped.txt")
	}
	return ""
}

// TestRunActionLeavesNothing is issue 30, item 4, for a command (a
// script's run action): what it left outside its process group, one of
// them holding its output pipe, ends with it; the action does not fail
// with "WaitDelay expired", and the run completes.
func TestRunActionLeavesNothing(t *testing.T) {
	bin := gafferBinary(t)
	for i, m := range runModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			marker := strconv.Itoa(3600 + os.Getpid()%300 + i)
			dir, plan, script := oneTaskRun(t, "setsid sh -c 'while :; do echo x >> escaped.txt; sleep 0.01; done' "+marker+
				" </dev/null >/dev/null 2>&1 & (setsid sleep "+marker+" </dev/null >/dev/null 2>&1 &); setsid sleep "+marker+" & sleep 0.3; echo left")
			out, code := binRun(t, bin, nil, nil, m.args("--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")...)
			if code != 0 || strings.Contains(out, "WaitDelay") {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			checkNoSurvivors(t, marker, writesIn(m, dir))
		})
	}
}

// TestSessionThatKillsItsParentIsAFailedAttempt is issue 30, item 3's
// last point: an agent whose command kills its parent (the agent) and
// tries its own parent first (in its PID namespace, the namespace's
// first process, which ignores it). gaffer lives on; the session is the
// agent's failure, which the review counts, and the run halts at the
// limit instead of replaying the session forever.
func TestSessionThatKillsItsParentIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := templateRepo(t, `cat > /dev/null
kill -9 $PPID 2>/dev/null
sh -c 'kill -9 $PPID'
echo survived
`, 2)
	out, code := binRun(t, bin, nil, nil, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-parent")
	if code != ExitHalted {
		t.Fatalf("run: exit %d, want %d (halted at the attempts' limit)\n%s", code, ExitHalted, out)
	}
	v := statusJSON(t, "--repo", dir, "r-parent")
	if v.Status != "halted" || len(v.Phases) == 0 || v.Phases[0].Status != "failed" {
		t.Errorf("status %q, phases %+v; want halted, phase 1 failed", v.Status, v.Phases)
	}
	if !strings.Contains(out, "status 137") {
		t.Errorf("the output does not say the agent was killed:\n%s", out)
	}
}

// TestGoModuleCacheStaysTheUsers is issue 30, item 5: a developer's
// command rewrites an extracted module's source in the module cache and
// an entry of the build cache; after the run both are as they were.
func TestGoModuleCacheStaysTheUsers(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	caches := t.TempDir()
	build, mod := filepath.Join(caches, "go-build"), filepath.Join(caches, "mod")
	modFile := filepath.Join(mod, "example.com", "m@v1.0.0", "m.go")
	for _, d := range []string{filepath.Dir(modFile), build} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, modFile, "package m\n")
	writeTestFile(t, filepath.Join(build, "entry"), "cached\n")
	if err := os.Chmod(filepath.Dir(modFile), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Dir(modFile), 0o755) })
	dir, plan, script := oneTaskRun(t, `f="$GOMODCACHE/example.com/m@v1.0.0/m.go"; chmod u+w "$(dirname "$f")" "$f"; `+
		`echo "package m // evil" > "$f"; echo poisoned > "$GOCACHE/entry"; true`)
	out, code := binRun(t, bin, nil, []string{"GOMODCACHE=" + mod, "GOCACHE=" + build}, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if got := readText(t, modFile); got != "package m\n" {
		t.Errorf("the module's source in the user's cache is now %q", got)
	}
	if got := readText(t, filepath.Join(build, "entry")); got != "cached\n" {
		t.Errorf("the user's build cache entry is now %q", got)
	}
}

// oneTaskRun writes, for a run of the demo's repository, a plan of one
// task and a script whose developer runs command and writes one.txt and
// whose reviewer approves; it returns the repository, the plan and the
// script.
func oneTaskRun(t *testing.T, command string) (dir, plan, script string) {
	t.Helper()
	dir, _, _ = demoRepo(t)
	aux := t.TempDir()
	plan, script = filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
	writeTestFile(t, plan, "# One\n\n### Task 1: One\n\nWrite one.txt.\n")
	writeTestFile(t, script, `developer:
  - phase: 1
    actions:
      - run: `+strconv.Quote(command)+`
      - write: {path: one.txt, content: "one\n"}
reviewer:
  - approved: true
    comments: fine
`)
	return dir, plan, script
}

// findProcesses returns the live processes whose command line (NUL
// separated) contains part.
func findProcesses(part string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !alive(pid) {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), part) {
			out = append(out, pid)
		}
	}
	return out
}

// procState returns process pid's state letter, or "gone".
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "gone"
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

func syscallKill(pid int) error { return (&os.Process{Pid: pid}).Kill() }

// TestClaudeCodeCannotPlantAGitFile is issue 30, item 1, with the real
// Claude Code: its Bash tool runs the attack (gitFileAttack). The
// rewrite of .git is refused, nothing planted runs, no secret of gaffer's
// environment leaks, and the run completes.
func TestClaudeCodeCannotPlantAGitFile(t *testing.T) {
	bin := gafferBinary(t) // before claudeOnPath's HOME, whose Go build cache is empty
	marker := filepath.Join(t.TempDir(), "filter-ran")
	srv := claudeOnPath(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		if r.HasToolResult() {
			return fakeanthropic.Reply{Text: "Done.", Usage: fakeanthropic.Usage{InputTokens: 600, OutputTokens: 5}}
		}
		return fakeanthropic.Reply{
			Text:     "Running it.",
			ToolUses: []fakeanthropic.ToolUse{{Name: "Bash", Input: map[string]string{"command": gitFileAttack(marker)}}},
			Usage:    fakeanthropic.Usage{InputTokens: 500, OutputTokens: 50},
		}
	})
	plan, script := planFiles(t, "# Plan\n\n### Task 1: Add a note\n\nWrite note.txt.\n", "reviewer:\n  - approved: true\n    comments: fine\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": claudeProfile(srv.URL, 1, 1)})
	wt := runModes[1].workDir(dir, "r-claude-gitfile")
	out, code := binRun(t, bin, nil, secretEnv(), "--repo", dir, "run", "--plan", plan, "--script", script,
		"--auto-approve", "--run-id", "r-claude-gitfile")
	checkNothingLeaked(t, marker, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if len(srv.Requests()) < 2 {
		t.Fatalf("Claude Code made %d requests, want the Bash call and its result", len(srv.Requests()))
	}
	last := lastMessage(srv.Requests()[1])
	if !strings.Contains(last, "could not rewrite .git") {
		t.Errorf("the Bash tool's result does not show the rewrite refused:\n%s", last)
	}
	if _, err := os.Stat(wt); err == nil {
		t.Errorf("the run's work tree %s is left", wt)
	}
	if got := gitOut(t, dir, "show", "gaffer/r-claude-gitfile:note.txt"); got != "a note" {
		t.Errorf("note.txt on the run's branch: %q", got)
	}
}

// TestCodexCannotPlantAGitFile is the same with the real Codex, whose
// exec_command runs the attack.
func TestCodexCannotPlantAGitFile(t *testing.T) {
	bin := gafferBinary(t) // before Codex's HOME, whose Go build cache is empty
	marker := filepath.Join(t.TempDir(), "filter-ran")
	srv, env := codexServer(t, func(r fakeresponses.Request) fakeresponses.Reply {
		if r.HasCallOutput() {
			return fakeresponses.Reply{Text: "Done."}
		}
		return fakeresponses.Reply{Text: "Running it.", Calls: []fakeresponses.Call{{Name: "exec_command",
			Arguments: map[string]string{"cmd": gitFileAttack(marker)}}}}
	})
	setenv(t, env) // Codex first in PATH, its HOME, its key
	plan, script := planFiles(t, "# Plan\n\n### Task 1: Add a note\n\nWrite note.txt.\n", "reviewer:\n  - approved: true\n    comments: fine\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": codexProfile})
	out, code := binRun(t, bin, nil, secretEnv(), "--repo", dir, "run", "--plan", plan, "--script", script,
		"--auto-approve", "--run-id", "r-codex-gitfile")
	checkNothingLeaked(t, marker, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	reqs := srv.Requests()
	if len(reqs) < 2 || !reqs[1].Contains("could not rewrite .git") {
		t.Errorf("the command's output does not show the rewrite refused (%d requests)", len(reqs))
	}
	if got := gitOut(t, dir, "show", "gaffer/r-codex-gitfile:note.txt"); got != "a note" {
		t.Errorf("note.txt on the run's branch: %q", got)
	}
}
