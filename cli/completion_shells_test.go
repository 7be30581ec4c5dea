package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The zsh and fish scripts of `gaffer completion`, loaded in a real zsh and
// fish with the gaffer binary on PATH, asked to complete command lines as a
// person's TAB would. TestCompletion does the same for bash.

// requireShell finds a shell, skipping the test when the machine has none
// unless GAFFER_REQUIRE_SHELLS=1 (CI), where a missing shell fails it.
func requireShell(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("GAFFER_REQUIRE_SHELLS") == "1" {
			t.Fatalf("%s is not installed and GAFFER_REQUIRE_SHELLS=1: %v", name, err)
		}
		t.Skipf("%s is not installed (apt-get install %s); set GAFFER_REQUIRE_SHELLS=1 to fail instead", name, name)
	}
	return path
}

// shellCase is a command line, the cursor at its end, and the candidates
// the shell must offer for it, in any order.
type shellCase struct {
	line string
	want []string
}

// shellSetup makes a repository holding run r-comp, a home directory that
// holds it (for ~), a working directory with two files (the fallback to
// file names), and the environment to run a shell in with gaffer on PATH.
func shellSetup(t *testing.T) (cases []shellCase, env []string, cwd string) {
	t.Helper()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-comp"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "gaffer")); err != nil {
		t.Fatal(err)
	}
	cwd = t.TempDir()
	for _, f := range []string{"plan.md", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(cwd, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Dir(dir) // dir is $home/calc
	xdg := t.TempDir()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "PATH" && k != "HOME" && !strings.HasPrefix(k, "XDG_") && k != "TERM" {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home, "TERM=dumb",
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"), "XDG_DATA_HOME="+filepath.Join(xdg, "data"),
		"XDG_CACHE_HOME="+filepath.Join(xdg, "cache"))
	cases = []shellCase{
		{"gaffer appr", []string{"approve"}},
		{"gaffer plan ", []string{"show", "validate"}},
		{"gaffer status --j", []string{"--json"}},
		{"gaffer fork --", []string{"--from", "--remote", "--repo", "--store", "--profile", "--log-level", "--log-format"}},
		{"gaffer completion ", []string{"bash", "fish", "zsh"}},
		{"gaffer --repo " + dir + " approve ", []string{"r-comp"}},
		{"gaffer --repo " + dir + " plan show r-", []string{"r-comp"}},
		{"gaffer --repo=" + dir + " logs r-c", []string{"r-comp"}},
		{"gaffer --repo '" + dir + "' diff ", []string{"r-comp"}},
		{"gaffer --repo ~/calc approve ", []string{"r-comp"}},
		{"gaffer run --plan pl", []string{"plan.md"}},
		{"gaffer --repo " + dir + " status r-comp ", []string{"notes.txt", "plan.md"}},
	}
	return cases, env, cwd
}

// sameSet reports whether got and want hold the same strings, in any order.
func sameSet(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

// zshDriver runs an interactive zsh on a pseudo-terminal (zpty), loads the
// completion there, types the line and a TAB, and writes every candidate
// that reaches compadd to OUT, then <done>. Usage: zsh -f DRIVER OUT MODE
// LINE, MODE being "source" (source <(gaffer completion zsh)) or "fpath"
// (the script saved as _gaffer in a directory of $fpath, as #compdef allows).
const zshDriver = `
zmodload zsh/zpty || exit 3
out=$1 mode=$2 line=$3
zpty z zsh -f -i
zpty -w z "PS1=''; PS2=''; unsetopt beep"
if [[ $mode == fpath ]]; then
	mkdir -p ${out}.fpath && gaffer completion zsh >${out}.fpath/_gaffer || exit 4
	zpty -w z "fpath=(${(q)out}.fpath \$fpath)"
fi
zpty -w z 'autoload -Uz compinit && compinit -u -D'
if [[ $mode == source ]]; then
	zpty -w z 'source <(gaffer completion zsh)'
fi
zpty -w z 'compadd() {
	if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
	local -a __hits
	builtin compadd -A __hits "$@"
	(( $#__hits )) && print -rl -- $__hits >>'${(q)out}'
	builtin compadd "$@"
}'
zpty -w z "__done() { print -r -- '<done>' >>${(q)out} }; comppostfuncs=(__done)"
zpty -w -n z "$line"$'\t'
for i in {1..200}; do
	[[ -f $out ]] && grep -q '<done>' $out && break
	sleep 0.05
done
zpty -d z
[[ -f $out ]] && grep -q '<done>' $out || { print "no completion ran"; exit 5 }
`

func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	zsh := requireShell(t, "zsh")
	cases, env, cwd := shellSetup(t)
	driver := filepath.Join(t.TempDir(), "drive.zsh")
	if err := os.WriteFile(driver, []byte(zshDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"source", "fpath"} {
		for i, c := range cases {
			if mode == "fpath" && i > 0 {
				break // the fpath way differs only in how the script loads
			}
			out := filepath.Join(t.TempDir(), "candidates")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			cmd := exec.CommandContext(ctx, zsh, "-f", driver, out, mode, c.line)
			cmd.Env, cmd.Dir = env, cwd
			msg, err := cmd.CombinedOutput()
			cancel()
			data, _ := os.ReadFile(out)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if l != "<done>" && l != "" {
					got = append(got, l)
				}
			}
			if err != nil || !sameSet(got, c.want) {
				t.Errorf("zsh (%s) completes %q: %v %s; got %q, want %q", mode, c.line, err, msg, got, c.want)
			}
		}
	}
}

func TestCompletionFish(t *testing.T) {
	t.Parallel()
	fish := requireShell(t, "fish")
	cases, env, cwd := shellSetup(t)
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, fish, "--no-config", "-c",
			`source (gaffer completion fish | psub); and complete -C $argv[1]`, c.line)
		cmd.Env, cmd.Dir = env, cwd
		var stderr strings.Builder
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		cancel()
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if cand, _, _ := strings.Cut(l, "\t"); cand != "" {
				got = append(got, cand)
			}
		}
		if err != nil || stderr.Len() > 0 || !sameSet(got, c.want) {
			t.Errorf("fish completes %q: %v %s; got %q, want %q", c.line, err, stderr.String(), got, c.want)
		}
	}
}
