package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

// buildGaffer builds the gaffer binary into a temporary directory.
func buildGaffer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gaffer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gaffer")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// orphanAgent writes a CLI agent script for the developer. Its first
// session never ends: it starts a background writer (a second process of
// its group) and writes itself, each a line every 5 ms to files in out,
// and records both pids there. Every later session does the greet work.
//
// With killWatchdog the agent first kills the other processes gaffer's
// start gate left in its group (the watchdog that ends the group when
// gaffer dies), as a hostile agent could, so that only the next gaffer
// process can end its background writer.
func orphanAgent(t *testing.T, out string, killWatchdog bool) string {
	t.Helper()
	script := filepath.Join(out, "dev.sh")
	kill := ""
	if killWatchdog {
		kill = `  for p in $(ps -o pid= --ppid $$); do [ "$p" = "$child" ] || kill -9 "$p" 2>/dev/null; done
`
	}
	body := `prompt=$(cat)
if [ ! -e '` + out + `/started' ]; then
  touch '` + out + `/started'
  ( while :; do echo x >> '` + out + `/child-writes'; sleep 0.005; done ) &
  child=$!
` + kill + `  echo $child > '` + out + `/child.pid'
  echo $$ > '` + out + `/leader.pid'
  while :; do echo y >> '` + out + `/leader-writes'; sleep 0.005; done
fi
case "$prompt" in
*"Execute phase 2 of"*) printf '%s' '` + greetImpl + `' > greet.go ;;
*) printf '%s' '` + greetTest + `' > greet_test.go ;;
esac
echo "wrote the files"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	return !strings.Contains(string(b[strings.LastIndexByte(string(b), ')'):]), ") Z ")
}

// waitFor polls cond every 10 ms, up to ten seconds.
func waitFor(cond func() bool) bool {
	for range 1000 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readText(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// TestAgentsDieWithGaffer SIGKILLs gaffer while its developer — a CLI
// agent made of two processes of one group, both writing every few
// milliseconds, which has killed the group's watchdog — works. In a PID
// namespace of its own the whole session dies with gaffer (its first
// process, the sandbox helper, gets Pdeathsig, and the kernel ends the
// namespace). Where the kernel refuses the PID namespace, the agent's
// leader dies with gaffer (Pdeathsig), the rest of its group is killed by
// the resume before it goes on, and nothing of the old group writes after
// that. In place and in the run's own work tree.
func TestAgentsDieWithGaffer(t *testing.T) {
	for _, m := range runModes {
		t.Run(m.name, func(t *testing.T) { agentsDieWithGaffer(t, m, nil) })
	}
	t.Run("own work tree, no PID namespace", func(t *testing.T) { agentsDieWithGaffer(t, runModes[1], noNamespaces(t, "pid")) })
}

func agentsDieWithGaffer(t *testing.T, m runMode, wrapper []string) {
	bin, dir, childWrites, leader, child, untouched := killWhileAgentWrites(t, m, true, wrapper)

	if !waitFor(func() bool { return !alive(leader) }) {
		t.Errorf("the agent (pid %d) outlived the killed gaffer", leader)
	}
	if wrapper == nil {
		// Its PID namespace ends with gaffer: nothing is left to resume.
		if !waitFor(func() bool { return !alive(child) }) {
			t.Errorf("the agent's background process %d outlived the killed gaffer", child)
		}
	} else if !alive(child) {
		t.Fatalf("the agent's background process %d died with gaffer: the resume has nothing to end, the test tests nothing", child)
	}

	res := startProc(t, bin, []string{"--repo", dir, "resume"}, "")
	resOut, code := res.wait()
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, resOut)
	}
	if killed := strings.Contains(resOut, "killed agent process groups left running by a killed gaffer process: ["+strconv.Itoa(leader)+"]"); killed != (wrapper != nil) {
		t.Errorf("resume said it killed group %d: %v, want %v:\n%s", leader, killed, wrapper != nil, resOut)
	}
	for _, pid := range []int{leader, child} {
		if alive(pid) {
			t.Errorf("process %d of the old agent is alive after resume", pid)
		}
	}
	// Killed processes stay in the group as zombies until init reaps them.
	if !waitFor(func() bool { return errors.Is(syscall.Kill(-leader, 0), syscall.ESRCH) }) {
		t.Errorf("the old agent's group %d still exists after resume", leader)
	}
	size := fileSize(childWrites)
	time.Sleep(100 * time.Millisecond)
	if got := fileSize(childWrites); got != size {
		t.Errorf("the old agent wrote after resume: %d bytes, then %d", size, got)
	}
	if m.inPlace {
		if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
			t.Errorf("tree not clean after the resumed run:\n%s", got)
		}
	}
	untouched("after the resumed run")
	m.workTreeGone(t, dir, "")
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git", "gaffer.groups")); len(entries) != 0 {
		t.Errorf("records left after the run: %v", entries)
	}
}

// TestKeyNotInGafferEnviron runs the gaffer binary with the llm's key in
// its initial environment and a CLI developer that reads its parent's —
// gaffer's — /proc/PID/environ and its own environment: neither may hold
// the key (and in a user namespace of its own the first read is refused).
func TestKeyNotInGafferEnviron(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs real processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux only")
	}
	const key = "sk-gaffer-environ-canary-5e2b7f"
	bin := buildGaffer(t)
	m := &greetModel{}
	srv := fakellm.NewOpenAIFunc(m.respond)
	defer srv.Close()
	out := t.TempDir()
	dump := filepath.Join(out, "env")
	script := filepath.Join(out, "dev.sh")
	body := `prompt=$(cat)
case "$prompt" in
*"Execute phase 2 of"*) printf '%s' '` + greetImpl + `' > greet.go ;;
*) printf '%s' '` + greetTest + `' > greet_test.go ;;
esac
{ echo "parent $PPID:"; tr '\0' '\n' < /proc/$PPID/environ || echo "parent environ refused"; echo "own:"; env; } >> '` + dump + `'
echo "wrote the files"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := greetRepo(t, map[string]string{"gaffer.yaml": mixedProfile(srv.BaseURL(), "GAFFER_LLM_CREDENTIAL", script, nil)})
	t.Setenv("GAFFER_LLM_CREDENTIAL", key)
	t.Setenv("GAFFER_TEST_VISIBLE", "visible-marker-3b9")
	p := startProc(t, bin, []string{"--repo", dir, "run", "--goal", "Add Greet", "--auto-approve"}, "")
	o, code := p.wait()
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, o)
	}
	if !strings.Contains(srv.Requests()[0].Auth, key) {
		t.Fatal("the key was not sent to the model endpoint: the test does not test anything")
	}
	seen := readText(t, dump)
	// In a PID namespace of its own the agent's parent is the sandbox
	// helper, the namespace's first process: gaffer is not in sight.
	if !strings.Contains(seen, "parent "+strconv.Itoa(p.cmd.Process.Pid)+":") && !strings.Contains(seen, "parent 1:") {
		t.Fatalf("the agent's parent is not gaffer (pid %d) nor its sandbox helper:\n%s", p.cmd.Process.Pid, seen)
	}
	// Where the kernel gives the agent a user namespace of its own, it
	// cannot read gaffer's environ at all (issue 20); elsewhere it reads a
	// copy without the key.
	refused := strings.Count(seen, "parent environ refused")
	if n := strings.Count(seen, "GAFFER_TEST_VISIBLE=visible-marker-3b9"); n+refused != 4 || refused != 0 && refused != 2 {
		t.Fatalf("the dumps lack the control variable (%d times, %d refused reads):\n%s", n, refused, seen)
	}
	if n := strings.Count(seen, key); n > 0 {
		t.Errorf("the key shows %d times in gaffer's /proc environ or the agent's environment", n)
	}
}

// TestStoreIsPrivateUnderUmask000 runs the demo's workflow with umask 000
// and checks that the store's directory and the record of process groups
// are 0700 and every file in them 0600.
func TestStoreIsPrivateUnderUmask000(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no umask")
	}
	dir, plan, script := demoRepo(t)
	old := syscall.Umask(0)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	syscall.Umask(old)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	for _, d := range []string{filepath.Join(dir, ".git", "gaffer"), filepath.Join(dir, ".git", "gaffer.groups")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, fi.Mode().Perm())
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %v, want 0600", filepath.Join(d, e.Name()), info.Mode().Perm())
			}
		}
	}
}

// TestCommandRefusesAForeignSocketDir gives a repository whose socket path
// is too long, so that it lives in the private directory, and makes that
// directory another user's: approve refuses in one line with exit 8.
func TestCommandRefusesAForeignSocketDir(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	xdg := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	priv := filepath.Join(xdg, "gaffer")
	if err := os.Mkdir(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(priv, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 40))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := gaffer(t, "--repo", dir, "approve", "--feedback", "ship it")
	t.Log(out)
	if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "belongs to uid 65534") {
		t.Errorf("exit %d, output %q; want exit 8 and one line saying whose the directory is", code, out)
	}
}

// TestAgentsGroupDiesWithGaffer SIGKILLs gaffer while its developer's two
// processes write, and checks that both die with gaffer — the leader by
// Pdeathsig, its background writer by the group's watchdog — with no
// other gaffer process started, and that a resume then completes and
// leaves no record.
func TestAgentsGroupDiesWithGaffer(t *testing.T) {
	bin, dir, childWrites, leader, child, _ := killWhileAgentWrites(t, runModes[1], false, nil)
	for _, pid := range []int{leader, child} {
		if !waitFor(func() bool { return !alive(pid) }) {
			t.Errorf("process %d of the agent outlived the killed gaffer", pid)
		}
	}
	size := fileSize(childWrites)
	time.Sleep(100 * time.Millisecond)
	if got := fileSize(childWrites); got != size {
		t.Errorf("the agent wrote after gaffer died: %d bytes, then %d", size, got)
	}
	res := startProc(t, bin, []string{"--repo", dir, "resume"}, "")
	if resOut, code := res.wait(); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, resOut)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git", "gaffer.groups")); len(entries) != 0 {
		t.Errorf("records left after the run: %v", entries)
	}
}

// killWhileAgentWrites runs the greet workflow with orphanAgent as its
// developer (killWatchdog as given) and SIGKILLs gaffer once the agent's
// leader and background child both write, the run in mode, gaffer under
// wrapper (see noNamespaces) when there is one. It returns the binary, the
// repository, the child's output file, the two pids (seen from here) and
// the check that the user's checkout is as it was before the run.
func killWhileAgentWrites(t *testing.T, mode runMode, killWatchdog bool, wrapper []string) (bin, dir, childWrites string, leader, child int, untouched func(string)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs real processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig and /proc are Linux only")
	}
	bin = gafferBinary(t)
	m := &greetModel{}
	srv := fakellm.NewOpenAIFunc(m.respond)
	t.Cleanup(srv.Close)
	out := t.TempDir()
	dir = greetRepo(t, map[string]string{"gaffer.yaml": mixedProfile(srv.BaseURL(), "OPENAI_API_KEY", orphanAgent(t, out, killWatchdog), nil)})
	t.Setenv("OPENAI_API_KEY", "sk-orphan-test")

	untouched = mode.untouched(t, dir)
	argv := append([]string{bin}, mode.args("--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")...)
	if wrapper != nil {
		argv = append(append([]string{}, wrapper...), argv...)
	}
	p := startProc(t, argv[0], argv[1:], "")
	childWrites = filepath.Join(out, "child-writes")
	if !waitFor(func() bool { return fileSize(childWrites) > 0 && fileSize(filepath.Join(out, "leader.pid")) > 0 }) {
		o, _ := p.wait()
		t.Fatalf("the agent did not start writing\n%s", o)
	}
	// In a PID namespace of its own the agent wrote the pids it has there.
	script := filepath.Join(out, "dev.sh")
	leader, child = hostPID(readPid(t, filepath.Join(out, "leader.pid")), script), hostPID(readPid(t, filepath.Join(out, "child.pid")), script)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		o, code := p.wait()
		t.Fatalf("%v: gaffer exited %d before it was killed:\n%s", err, code, o)
	}
	p.wait()
	return bin, dir, childWrites, leader, child, untouched
}

// hostPID returns the pid, seen from here, of the live process whose
// command line contains part and whose pid in its own PID namespace (the
// last of /proc/PID/status's NSpid) is pid: a process in a PID namespace
// of its own knows only that one. pid itself when there is none.
func hostPID(pid int, part string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err != nil || !strings.Contains(string(b), part) {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(st), "\n") {
			if f, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if ids := strings.Fields(f); len(ids) > 0 && ids[len(ids)-1] == strconv.Itoa(pid) {
					host, _ := strconv.Atoi(e.Name())
					return host
				}
			}
		}
	}
	return pid
}
