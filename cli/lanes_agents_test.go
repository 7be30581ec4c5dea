package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/fakeanthropic"
	"github.com/gaffer-dev/gaffer/internal/fakeresponses"
	"github.com/gaffer-dev/gaffer/state"
)

// agentLanesPlan is one phase of two lanes (disjoint files).
const agentLanesPlan = `# Plan: two lanes

### Task 1: Write hello
- type: test
- depends on: none
- files: hello.txt

hello.txt says hello.

### Task 2: Write bye
- type: test
- depends on: none
- files: bye.txt

bye.txt says bye.
`

// agentLanesReview rejects the phase's first attempt without naming a
// task: both lanes run again, each continuing its own session.
const agentLanesReview = `reviewer:
  - phase: 1
    attempt: 1
    approved: false
    comments: say it twice
`

// agentLaneWork is what the fake model has the agent of a lane do, from
// the lane's prompt: its file, then (the review's retry) its file again,
// twice.
func agentLaneWork(prompt string) (file, content string, ok bool) {
	retry := strings.Contains(prompt, "Review 1 of the phase rejected it")
	for _, l := range []struct{ lane, file, word string }{{"1", "hello.txt", "hello"}, {"2", "bye.txt", "bye"}} {
		if strings.Contains(prompt, "Execute lane "+l.lane+" of phase 1") {
			if retry {
				return l.file, l.word + " " + l.word + "\n", true
			}
			return l.file, l.word + "\n", true
		}
	}
	return "", "", false
}

// laneSleep is how long a lane's agent works on its file (a command it
// runs): long enough that the lanes' sessions, started at once, overlap
// whatever their processes' start-up.
const laneSleep = "6"

// checkAgentLanes checks a run of agentLanesPlan whose two lanes ran at
// once, each in a session of its own that the review's retry continued:
// both files committed as the retry wrote them, both lanes' first
// requests reached the model before either lane's command was done
// (order lists the requests as "first 1", "first 2" or "more"), their
// session ids differ, and each retry's conversation held its own lane's
// first session and not the other's (seen tells whether the requests
// answering lane (1 or 2)'s retry contain s).
func checkAgentLanes(t *testing.T, dir string, order []string, seen func(lane int, s string) bool) {
	t.Helper()
	if len(order) < 2 || !strings.HasPrefix(order[0], "first") || !strings.HasPrefix(order[1], "first") {
		t.Errorf("the lanes did not run at once: requests %v", order)
	}
	rev := runRev(t, dir)
	for f, want := range map[string]string{"hello.txt": "hello hello", "bye.txt": "bye bye"} {
		if got := gitOut(t, dir, "show", rev+"~1:"+f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	s := storedState(t, filepath.Join(dir, ".git", "gaffer"), statusJSON(t, "--repo", dir).RunID)
	ps := s.Progress.Phases[0]
	if len(ps.Lanes) != 2 {
		t.Fatalf("phase 1 has %d lanes", len(ps.Lanes))
	}
	a, b := ps.Lanes[0], ps.Lanes[1]
	if a.SessionID == "" || b.SessionID == "" || a.SessionID == b.SessionID {
		t.Errorf("the lanes' session ids: %q and %q, want two of their own", a.SessionID, b.SessionID)
	}
	if a.Iteration != 1 || b.Iteration != 1 || a.Status != state.LaneDone || b.Status != state.LaneDone {
		t.Errorf("lanes %+v and %+v, want both done after one review's retry", a, b)
	}
	if u := a.Usage; u.InputTokens == 0 {
		t.Errorf("lane 1's usage %+v, want the agent's tokens", u)
	}
	for lane, own := range map[int]string{1: "Writing hello.txt", 2: "Writing bye.txt"} {
		other := map[int]string{1: "Writing bye.txt", 2: "Writing hello.txt"}[lane]
		if !seen(lane, own) {
			t.Errorf("lane %d's retry does not continue its session: its first conversation (%q) is not in it", lane, own)
		}
		if seen(lane, other) {
			t.Errorf("lane %d's retry holds the other lane's conversation (%q)", lane, other)
		}
	}
}

// TestClaudeCodeLanes runs a phase of two lanes on the real Claude Code
// (the pinned install) against the scripted Anthropic server: two sessions
// at once, each in its lane's tree; the review rejects the phase and each
// lane's Claude Code continues its own session (--resume, its own id, its
// own directory).
func TestClaudeCodeLanes(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	srv, env := claudeEnv(t, func(r fakeanthropic.Request) fakeanthropic.Reply {
		last := lastMessage(r)
		if r.HasToolResult() {
			return fakeanthropic.Reply{Text: "Done.", Usage: fakeanthropic.Usage{InputTokens: 600, OutputTokens: 5}}
		}
		if file, content, ok := agentLaneWork(last); ok {
			return fakeanthropic.Reply{Text: "Writing " + file + ".", ToolUses: []fakeanthropic.ToolUse{{Name: "Bash",
				Input: map[string]string{"command": laneCommand(file, content)}}},
				Usage: fakeanthropic.Usage{InputTokens: 500, OutputTokens: 50}}
		}
		return fakeanthropic.Reply{Status: 400, ErrorMessage: "the fake cannot place this request"}
	})
	plan, script := planFiles(t, agentLanesPlan, agentLanesReview)
	dir := greetRepo(t, map[string]string{"gaffer.yaml": claudeProfile(srv.URL, 3, 2)})
	if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	var order []string
	for _, r := range srv.Requests() {
		order = append(order, requestKind(lastMessage(r), r.HasToolResult()))
	}
	checkAgentLanes(t, dir, order, func(lane int, s string) bool {
		for _, r := range srv.Requests() {
			last := lastMessage(r)
			if strings.Contains(last, "Review 1 of the phase rejected it") && strings.Contains(last, fmt.Sprintf("Execute lane %d of phase 1", lane)) && r.Contains(s) {
				return true
			}
		}
		return false
	})
}

// TestCodexLanes is TestClaudeCodeLanes with the real Codex (the pinned
// install) against the scripted Responses server: each lane's retry is
// `codex exec resume` of its own session.
func TestCodexLanes(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	srv, env := codexServer(t, func(r fakeresponses.Request) fakeresponses.Reply {
		kind, text := lastInput(r)
		if kind == "function_call_output" {
			return fakeresponses.Reply{Text: "Done."}
		}
		if file, content, ok := agentLaneWork(text); ok {
			return fakeresponses.Reply{Text: "Writing " + file + ".", Calls: []fakeresponses.Call{{Name: "exec_command",
				Arguments: map[string]string{"cmd": laneCommand(file, content)}}}}
		}
		return fakeresponses.Reply{Status: 400, ErrorMessage: "the fake cannot place this request"}
	})
	plan, script := planFiles(t, agentLanesPlan, agentLanesReview)
	dir := greetRepo(t, map[string]string{"gaffer.yaml": codexProfile})
	if out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	var order []string
	for _, r := range srv.Requests() {
		kind, last := lastInput(r)
		order = append(order, requestKind(last, kind == "function_call_output"))
	}
	checkAgentLanes(t, dir, order, func(lane int, s string) bool {
		for _, r := range srv.Requests() {
			_, last := lastInput(r)
			if strings.Contains(last, "Review 1 of the phase rejected it") && strings.Contains(last, fmt.Sprintf("Execute lane %d of phase 1", lane)) && r.Contains(s) {
				return true
			}
		}
		return false
	})
}

// lastInput returns the type of the last item of a Responses request's
// input and its text (a message's, or a call output's).
func lastInput(r fakeresponses.Request) (kind, text string) {
	var body struct {
		Input []json.RawMessage `json:"input"`
	}
	if json.Unmarshal(r.Body, &body) != nil || len(body.Input) == 0 {
		return "", ""
	}
	last := body.Input[len(body.Input)-1]
	var item struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(last, &item)
	return item.Type, string(last)
}

// laneCommand is the shell command a lane's agent runs: it works a while
// (laneSleep seconds), then writes its file.
func laneCommand(file, content string) string {
	return "sleep " + laneSleep + "; printf '" + strings.TrimSuffix(content, "\n") + "\\n' > " + file
}

// requestKind sorts a model request by its last message: a lane's first
// ("first 1", "first 2"), or any later one ("more").
func requestKind(last string, toolResult bool) string {
	if !toolResult && !strings.Contains(last, "Review 1 of the phase rejected it") {
		for _, lane := range []string{"1", "2"} {
			if strings.Contains(last, "Execute lane "+lane+" of phase 1") {
				return "first " + lane
			}
		}
	}
	return "more"
}
