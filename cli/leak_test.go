package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

// TestSecretsLeakNowhere runs a whole workflow through the llm driver with
// a distinctive API key, a secret-looking variable and a notify webhook's
// URL and HMAC key (url_env, secret_env) in the environment, then looks
// for them everywhere a run leaves things: gaffer's output and
// JSON logs, every file of the work tree and .git (the Badger store's raw
// files among them), every checkpoint of the store decoded, every git
// object, the log with patches and the reflog, and what the agent's
// commands saw (the phase 1 developer runs env). Each search is shown to
// work by finding something that is supposed to be there.
func TestSecretsLeakNowhere(t *testing.T) {
	const (
		key    = "sk-gaffer-leak-canary-4e1f0b7d93a2"
		secret = "tok-gaffer-leak-canary-88c1d2"
	)
	m := &greetModel{}
	srv := fakellm.NewOpenAIFunc(m.respond)
	defer srv.Close()
	profile := strings.Replace(llmProfile("openai", srv.BaseURL(), "OPENAI_API_KEY"), "      api_key_env: OPENAI_API_KEY\n", "", 1) +
		"    notify:\n      targets:\n        - webhook: {url_env: GAFFER_TEST_NOTIFY_URL, secret_env: GAFFER_TEST_NOTIFY_SECRET}\n"
	dir := greetRepo(t, map[string]string{"gaffer.yaml": profile})
	hook := newSignedHook(t)
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("GAFFER_TEST_DEPLOY_TOKEN", secret)
	t.Setenv("GAFFER_TEST_NOTIFY_URL", hook.srv.URL+notifyHookPath)
	t.Setenv("GAFFER_TEST_NOTIFY_SECRET", notifyHookSecret)
	t.Setenv("GAFFER_TEST_VISIBLE", "visible-marker-3b9")

	out, code := gaffer(t, "--repo", dir, "--log-level", "debug", "--log-format", "json", "run", "--goal", "Add Greet", "--auto-approve",
		"--in-place") // the run's files stay in the tree searched below
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	checkGreetRun(t, dir)
	if !strings.Contains(srv.Requests()[0].Auth, key) {
		t.Fatal("the key was not sent to the model endpoint: the test does not test anything")
	}
	if signed, refused := hook.got(); len(signed) != 1 || len(refused) > 0 {
		t.Fatalf("the webhook got %q signed and refused %q: the notify variables were not used", signed, refused)
	}

	type place struct {
		name, text, control string // control must be found, to show the search saw the place
	}
	var places []place
	places = append(places, place{"gaffer's output and logs", out, "completed"})

	var files bytes.Buffer
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&files, "%s\n%s\n", p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	places = append(places, place{"the files of the work tree and .git (store, execution directory)", files.String(), "execution-state.json"})

	places = append(places, place{"the store's checkpoints", decodedCheckpoints(t, filepath.Join(dir, ".git", "gaffer")), "OPENAI_API_KEY"})

	for _, args := range [][]string{
		{"log", "-p", "--all"},
		{"cat-file", "--batch-all-objects", "--batch"},
		{"reflog", "--all"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		places = append(places, place{"git " + strings.Join(args, " "), string(b), "greet"})
	}

	var seen strings.Builder
	for _, r := range srv.Requests() {
		seen.WriteString(strings.Join(r.ToolResults, "\n"))
	}
	places = append(places, place{"what the agent's commands printed (env)", seen.String(), "visible-marker-3b9"})

	for _, p := range places {
		if !strings.Contains(p.text, p.control) {
			t.Errorf("%s: the control %q is missing, so the search saw nothing", p.name, p.control)
		}
		for _, s := range []string{key, secret, "notify-keys-canary-91b2e4", notifyHookSecret} {
			if n := strings.Count(p.text, s); n > 0 {
				t.Errorf("%s: %d copies of %q", p.name, n, s)
			}
		}
	}
}

// mixedProfile is a gaffer.yaml whose architect, reviewer and evaluator use
// the llm driver (the key in keyEnv) and whose developer is a CLI agent:
// the script at dev, given the prompt on stdin, with passEnv as its
// pass_env. The script's directory is writable for it, so that it can
// leave there what the tests read.
func mixedProfile(baseURL, keyEnv, dev string, passEnv []string) string {
	return fmt.Sprintf(`default_profile: mixed
profiles:
  mixed:
    driver: llm
    model: fake-model
    provider: {name: openai, base_url: %q, api_key_env: %s}
    roles:
      developer: {driver: cli, agent: dev}
    agents:
      dev:
        command: [sh, %q]
        prompt: stdin
        output: text
        pass_env: [%s]
        writable: [%q]
    limits: {max_turns: 12, max_task_review_iterations: 2}
    tdd: false
`, baseURL, keyEnv, dev, strings.Join(passEnv, ", "), filepath.Dir(dev))
}

// devAgent writes a CLI agent script, in dump's directory, that does the
// greet phases and appends its environment to dump; with parentToo it
// appends gaffer's too (its parent's, as /proc shows it) to dump.parent.
func devAgent(t *testing.T, dump string, parentToo bool) string {
	t.Helper()
	script := filepath.Join(filepath.Dir(dump), "dev.sh")
	body := `prompt=$(cat)
case "$prompt" in
*"Execute phase 2 of"*) printf '%s' '` + greetImpl + `' > greet.go ;;
*) printf '%s' '` + greetTest + `' > greet_test.go ;;
esac
env >> '` + dump + `'
`
	if parentToo {
		body += `tr '\0' '\n' < /proc/$PPID/environ >> '` + dump + `.parent' 2>/dev/null
`
	}
	body += `echo "wrote the files"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestKeyReachesNoOtherProcess runs mixed profiles — the llm driver for
// the architect and reviewer, a CLI agent for the developer — with the
// llm's key in a variable whose name does not look like a secret, and
// checks what the CLI agent saw: not the key, unless its pass_env lists
// the variable.
func TestKeyReachesNoOtherProcess(t *testing.T) {
	const (
		keyEnv = "GAFFER_LLM_CREDENTIAL"
		key    = "sk-gaffer-mixed-canary-7d1a9c"
	)
	for _, c := range []struct {
		name    string
		passEnv []string
		want    bool
	}{
		{"not passed", nil, false},
		{"pass_env lists it", []string{keyEnv}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &greetModel{}
			srv := fakellm.NewOpenAIFunc(m.respond)
			defer srv.Close()
			dump := filepath.Join(t.TempDir(), "env")
			dir := greetRepo(t, map[string]string{"gaffer.yaml": mixedProfile(srv.BaseURL(), keyEnv, devAgent(t, dump, false), c.passEnv)})
			t.Setenv(keyEnv, key)
			t.Setenv("GAFFER_TEST_VISIBLE", "visible-marker-3b9")
			out, code := gaffer(t, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			if !strings.Contains(srv.Requests()[0].Auth, key) {
				t.Fatal("the key was not sent to the model endpoint: the test does not test anything")
			}
			seen := readText(t, dump)
			if !strings.Contains(seen, "visible-marker-3b9") {
				t.Fatalf("the agent's environment dump lacks the control variable:\n%s", seen)
			}
			if got := strings.Contains(seen, key); got != c.want {
				t.Errorf("the CLI agent saw the llm's key: %v, want %v", got, c.want)
			}
		})
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// decodedCheckpoints is every checkpoint of every run in the Badger store
// at dir, as text: what ran, what is next, the meta, each value and the
// interrupt. Tests search it for what must not be stored.
func decodedCheckpoints(t *testing.T, dir string) string {
	t.Helper()
	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var decoded strings.Builder
	ctx := context.Background()
	runs, err := store.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		cps, err := store.List(ctx, r.RunID, checkpoint.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			fmt.Fprintf(&decoded, "%v %v %v\n", cp.Ran, cp.Next, cp.Meta)
			for k, v := range cp.Values {
				fmt.Fprintf(&decoded, "%s: %s\n", k, v)
			}
			if cp.Interrupt != nil {
				fmt.Fprintf(&decoded, "interrupt: %+v\n", *cp.Interrupt)
			}
		}
	}
	return decoded.String()
}
