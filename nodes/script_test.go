package nodes

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt")

// TestScripts plays the stories of testdata/*.txt: each command is
// followed by "----" and its expected output, up to a blank line. Run
// with -rewrite to update the expected output.
//
//	setup NAME         a repository and the agents of testdata/NAME.yaml
//	run PLAN [auto]    start run r-1 on testdata/PLAN.md (auto-approve)
//	crash NODE         the next checkpoint after NODE is lost, as if the
//	                   process died right after NODE's side effects
//	resume | approve | reject [FEEDBACK]
//	tree | log | files the phases, the commits, git status
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no testdata/*.txt")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var h *harness
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s:%d: command without ----", file, i+1)
		}
		var want []string
		j := i + 2
		for ; j < len(lines) && lines[j] != ""; j++ {
			want = append(want, lines[j])
		}
		got := strings.TrimRight(h.command(t, &h, l), "\n")
		out.WriteString(l + "\n----\n" + got + "\n")
		if !*rewrite && got != strings.Join(want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, i+1, l, got, strings.Join(want, "\n"))
		}
		i = j - 1
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// command runs one script command; hp is set by setup.
func (h *harness) command(t *testing.T, hp **harness, line string) string {
	f := strings.Fields(line)
	ctx := context.Background()
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	if f[0] != "setup" && h == nil {
		t.Fatalf("%s before setup", f[0])
	}
	switch f[0] {
	case "setup":
		sc, err := os.ReadFile(filepath.Join("testdata", arg(1)+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		*hp = newHarness(t, string(sc))
		return "ok"
	case "run":
		md, err := os.ReadFile(filepath.Join("testdata", arg(1)+".md"))
		if err != nil {
			t.Fatal(err)
		}
		return outcome(h.start(string(md), state.RunConfig{AutoApprove: arg(2) == "auto"}))
	case "crash":
		node := arg(1)
		h.store.mu.Lock()
		h.store.failed = false
		h.store.fail = func(cp checkpoint.Checkpoint) bool { return slices.Equal(cp.Ran, []string{node}) }
		h.store.mu.Unlock()
		return "armed: the checkpoint after " + node + " will be lost"
	case "resume":
		return outcome(h.runner.Resume(ctx, "r-1"))
	case "approve":
		return outcome(h.runner.Resume(ctx, "r-1", graph.WithResume(Answer{Approved: true})))
	case "reject":
		return outcome(h.runner.Resume(ctx, "r-1", graph.WithResume(Answer{Feedback: strings.Join(f[1:], " ")})))
	case "tree":
		snap, err := h.runner.State(ctx, "r-1")
		if err != nil {
			return "error: " + err.Error()
		}
		return tree(snap.State)
	case "log":
		return h.git("log", "--format=%s")
	case "files":
		return h.git("status", "--porcelain")
	}
	t.Fatalf("unknown command %q", line)
	return ""
}

func outcome(res graph.Result[state.ExecutionState], err error) string {
	if err != nil {
		msg := err.Error()
		if errors := strings.SplitN(msg, "\n", 2); len(errors) > 1 {
			msg = errors[0]
		}
		return "error: " + msg
	}
	s := fmt.Sprintf("%s: status %s", res.Status, res.State.Status)
	if res.Interrupt != nil {
		s += ", waiting in " + res.Interrupt.Node
	}
	return s
}

func tree(s state.ExecutionState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s, %s mode, plan revision %d\n", s.Status, s.Plan.Mode, s.Progress.PlanRevision)
	for i, ph := range s.Plan.Phases {
		ps := s.Progress.Phases[i]
		fmt.Fprintf(&b, "phase %d [%s]: %s, attempt %d", i+1, strings.Join(ph.TaskIDs, " "), ps.Status, ps.Attempt)
		if ps.Review != nil {
			fmt.Fprintf(&b, ", reviewed %v", map[bool]string{true: "approved", false: "rejected"}[ps.Review.Approved])
		}
		b.WriteByte('\n')
	}
	sc := bufio.NewScanner(strings.NewReader(strings.Join(s.Errors, "\n")))
	for sc.Scan() {
		fmt.Fprintf(&b, "error: %s\n", sc.Text())
	}
	return b.String()
}
