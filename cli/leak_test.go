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
	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

// TestSecretsLeakNowhere runs a whole workflow through the llm driver with
// a distinctive API key and a secret-looking variable in the environment,
// then looks for both everywhere a run leaves things: gaffer's output and
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
	profile := strings.Replace(llmProfile("openai", srv.BaseURL(), "OPENAI_API_KEY"), "      api_key_env: OPENAI_API_KEY\n", "", 1)
	dir := greetRepo(t, map[string]string{"gaffer.yaml": profile})
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("GAFFER_TEST_DEPLOY_TOKEN", secret)
	t.Setenv("GAFFER_TEST_VISIBLE", "visible-marker-3b9")

	out, code := gaffer(t, "--repo", dir, "--log-level", "debug", "--log-format", "json", "run", "--goal", "Add Greet", "--auto-approve")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	checkGreetRun(t, dir)
	if !strings.Contains(srv.Requests()[0].Auth, key) {
		t.Fatal("the key was not sent to the model endpoint: the test does not test anything")
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

	store, err := checkpoint.OpenBadger(filepath.Join(dir, ".git", "gaffer"), checkpoint.BadgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
	store.Close()
	places = append(places, place{"the store's checkpoints", decoded.String(), "OPENAI_API_KEY"})

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
		for _, s := range []string{key, secret} {
			if n := strings.Count(p.text, s); n > 0 {
				t.Errorf("%s: %d copies of %q", p.name, n, s)
			}
		}
	}
}
