package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/internal/otlprecv"
	"github.com/gaffer-dev/gaffer/telemetry"
)

// TestTelemetryTraceOfAKilledRun runs the greet workflow (two phases,
// the llm driver against the fake model) through the binary with
// gaffer.yaml's telemetry block pointing at a real OTLP receiver: the
// first review rejects, the process is SIGKILLed in phase 2's developer
// session, and gaffer resume finishes the run. The receiver holds one
// trace: one root, the phases under it with their develop and review
// spans, the cut span marked, every session with its model and tokens,
// its model calls (chat) and tool calls under it, the phases' commits
// under their reviews, and no secret in any attribute.
func TestTelemetryTraceOfAKilledRun(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	recv, err := otlprecv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()

	m := &greetModel{reviews: func(n int) fakellm.Turn {
		if n == 1 {
			return fakellm.Turn{Text: `{"approved": false, "comments": "name the test's case"}`, Input: 1000, Output: 100}
		}
		return fakellm.Turn{Text: `{"approved": true, "comments": "looks right"}`, Input: 1000, Output: 100}
	}}
	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := fakellm.NewOpenAIFunc(func(r fakellm.Request) fakellm.Turn {
		if strings.Contains(r.System, "developer agent") && strings.Contains(r.LastUser, "Execute phase 2 of") {
			hold := false
			once.Do(func() { hold = true })
			if hold {
				close(blocked)
				<-release
			}
		}
		return m.respond(r)
	})
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	const key = "sk-test-otel-secret-4242"
	yaml := llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_OPENAI_KEY") +
		fmt.Sprintf("telemetry:\n  endpoint: %s\n  service_name: gaffer-e2e\n", recv.Endpoint())
	dir := greetRepo(t, map[string]string{"gaffer.yaml": yaml})
	env := []string{"GAFFER_TEST_OPENAI_KEY=" + key}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME"} {
		env = append(env, v+"=")
	}
	const runID = "r-20260101-otel01"

	t0 := time.Now()
	p := startProc(t, bin, []string{"--repo", dir, "run", "--goal", "Add Greet", "--auto-approve", "--run-id", runID}, env...)
	select {
	case <-blocked:
	case <-p.done:
		out, code := p.wait()
		t.Fatalf("the run ended (exit %d) before phase 2's developer:\n%s", code, out)
	case <-time.After(2 * time.Minute):
		t.Fatal("phase 2's developer never called the model")
	}
	// Phase 1's spans, ended, are exported within the batch timeout.
	for deadline := time.Now().Add(time.Minute); !hasSpan(recv.Spans(), "phase 1"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("phase 1's span never arrived; got %d spans", len(recv.Spans()))
		}
	}
	t.Logf("phase 1 exported at %v", time.Since(t0))
	if !p.killAt("random", 0) {
		t.Fatal("the run was not killed")
	}
	close(release)
	t.Logf("killed at %v", time.Since(t0))
	if out, code := startProc(t, bin, []string{"--repo", dir, "resume"}, env...).wait(); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}

	t.Logf("resumed at %v", time.Since(t0))
	spans := recv.Spans()
	byID := map[string]otlprecv.Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	var roots, cut []otlprecv.Span
	under := map[string]map[string]int{} // parent name -> child name -> count
	rejected := false
	for _, s := range spans {
		if s.TraceID != telemetry.TraceID(runID).String() {
			t.Errorf("span %s is in trace %s, not the run's", s.Name, s.TraceID)
		}
		if s.Resource["service.name"] != "gaffer-e2e" {
			t.Errorf("span %s: service.name = %v, want the block's", s.Name, s.Resource["service.name"])
		}
		for k, v := range s.Attrs {
			if str := fmt.Sprint(v); strings.Contains(str, key) || strings.Contains(str, "sk-") {
				t.Errorf("span %s: attribute %s holds a key: %q", s.Name, k, str)
			}
		}
		if s.ParentID == "" {
			roots = append(roots, s)
			continue
		}
		parent, ok := byID[s.ParentID]
		if !ok {
			t.Errorf("span %s: its parent %s was never received", s.Name, s.ParentID)
			continue
		}
		if under[parent.Name] == nil {
			under[parent.Name] = map[string]int{}
		}
		under[parent.Name][s.Name]++
		if s.Attrs["gaffer.cut"] == true {
			cut = append(cut, s)
		}
		if s.Name == "review" && s.Attrs["gaffer.review.approved"] == false {
			rejected = true
		}
		if strings.HasPrefix(s.Name, "chat ") || strings.HasPrefix(s.Name, "execute_tool ") || strings.HasPrefix(s.Name, "git ") {
			if s.Start.Before(parent.Start) || s.End.After(parent.End) || s.End.Before(s.Start) {
				t.Errorf("span %s (%v..%v) is not within its parent %s (%v..%v)", s.Name, s.Start, s.End, parent.Name, parent.Start, parent.End)
			}
			if s.Attrs["gaffer.run_id"] != runID {
				t.Errorf("span %s attributes = %v, want the run id", s.Name, s.Attrs)
			}
		}
		if strings.HasPrefix(s.Name, "chat ") {
			in, _ := s.Attrs["gen_ai.usage.input_tokens"].(int64)
			if in <= 0 || s.Attrs["gen_ai.request.model"] != "fake-model" || s.Attrs["gen_ai.operation.name"] != "chat" || !strings.HasPrefix(parent.Name, "invoke_agent ") {
				t.Errorf("model call %s under %s: attributes = %v", s.Name, parent.Name, s.Attrs)
			}
		}
		if s.Name == "git commit" {
			if gp := byID[parent.ParentID]; !strings.HasPrefix(gp.Name, "phase ") {
				t.Errorf("git commit under %s under %s, want a phase's node", parent.Name, gp.Name)
			}
		}
		if strings.HasPrefix(s.Name, "invoke_agent ") {
			in, _ := s.Attrs["gen_ai.usage.input_tokens"].(int64)
			out, _ := s.Attrs["gen_ai.usage.output_tokens"].(int64)
			if in <= 0 || out <= 0 || s.Attrs["gen_ai.request.model"] != "fake-model" || s.Attrs["gen_ai.operation.name"] != "invoke_agent" {
				t.Errorf("session %s attributes = %v, want its model and tokens", s.Name, s.Attrs)
			}
		}
	}
	if len(roots) != 1 || roots[0].Name != "gaffer run" || roots[0].SpanID != telemetry.RootSpanID(runID).String() || roots[0].Attrs["gaffer.run_id"] != runID {
		t.Fatalf("roots = %+v, want the one run span", roots)
	}
	if got := under["gaffer run"]; got["plan"] != 1 || got["phase 1"] != 1 || got["phase 2"] != 1 {
		t.Errorf("under the run: %v, want plan, phase 1, phase 2", got)
	}
	if got := under["phase 1"]; got["develop"] != 2 || got["review"] != 2 {
		t.Errorf("under phase 1: %v, want two develop and two review (a rejection)", got)
	}
	if got := under["phase 2"]; got["develop"] != 2 || got["review"] != 1 {
		t.Errorf("under phase 2: %v, want the cut develop, the resumed one and a review", got)
	}
	if under["plan"]["invoke_agent architect"] != 1 || under["develop"]["invoke_agent developer"] != 3 || under["review"]["invoke_agent reviewer"] != 3 {
		t.Errorf("sessions: plan %v, develop %v, review %v", under["plan"], under["develop"], under["review"])
	}
	// Each model call and tool call under its session (the resumed
	// developer sessions' calls: the cut one's never ended), each phase's
	// commit under the review that approved it.
	if got := under["invoke_agent developer"]; got["chat fake-model"] < 3 || got["execute_tool write_file"] < 1 || got["execute_tool run_command"] < 1 {
		t.Errorf("under the developer sessions: %v, want their model calls and tool calls", got)
	}
	if under["invoke_agent architect"]["chat fake-model"] != 1 || under["invoke_agent reviewer"]["chat fake-model"] < 3 {
		t.Errorf("model calls: architect %v, reviewer %v", under["invoke_agent architect"], under["invoke_agent reviewer"])
	}
	if under["review"]["git commit"] < 2 {
		t.Errorf("under review: %v, want both phases' commits", under["review"])
	}
	if !rejected {
		t.Error("no review span says it rejected")
	}
	if len(cut) != 1 || cut[0].Name != "develop" || !cut[0].StatusError || byID[cut[0].ParentID].Name != "phase 2" {
		t.Errorf("cut spans = %+v, want phase 2's develop, status Error", cut)
	}
}

func hasSpan(spans []otlprecv.Span, name string) bool {
	for _, s := range spans {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestTelemetryContent plans a run (the architect on the llm driver
// against the fake model) through the binary, its goal naming the run's
// API key and the model's plan echoing it, with the OTLP receiver as the
// endpoint. With telemetry.content: true the architect's chat span
// carries the prompt and the completion as gen_ai.input.messages and
// gen_ai.output.messages, the key redacted as in the transcript, and no
// attribute of any span holds the key; with content off (the default)
// no span holds the prompt's text.
func TestTelemetryContent(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const key = "sk-test-otel-content-9731"
	const marker = "Add Greet, content-marker-5519"
	for _, content := range []bool{true, false} {
		t.Run(fmt.Sprintf("content=%v", content), func(t *testing.T) {
			t.Parallel()
			recv, err := otlprecv.Start()
			if err != nil {
				t.Fatal(err)
			}
			defer recv.Close()
			srv := fakellm.NewOpenAIFunc(func(r fakellm.Request) fakellm.Turn {
				if strings.Contains(r.System, "architect agent") {
					return fakellm.Turn{Text: greetPlan + "\nThe key I was given: " + key + "\n", Input: 1000, Output: 100}
				}
				return fakellm.Turn{Status: 400, Text: "only the architect runs here"}
			})
			defer srv.Close()
			yaml := llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_OPENAI_KEY") +
				fmt.Sprintf("telemetry:\n  endpoint: %s\n  content: %v\n", recv.Endpoint(), content)
			dir := greetRepo(t, map[string]string{"gaffer.yaml": yaml})
			env := []string{"GAFFER_TEST_OPENAI_KEY=" + key, "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=",
				"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_SERVICE_NAME="}
			out, code := binRun(t, bin, nil, env, "--repo", dir, "run", "--goal", marker+" (token "+key+")", "--run-id", "r-20260101-otelc1")
			if code != ExitAwaitingApproval {
				t.Fatalf("run: exit %d, want %d (the plan awaits approval)\n%s", code, ExitAwaitingApproval, out)
			}
			var chat *otlprecv.Span
			for deadline := time.Now().Add(30 * time.Second); chat == nil; time.Sleep(20 * time.Millisecond) {
				for _, s := range recv.Spans() {
					if s.Name == "chat fake-model" {
						chat = &s
					}
				}
				if chat == nil && time.Now().After(deadline) {
					t.Fatalf("the architect's chat span never arrived; got %d spans", len(recv.Spans()))
				}
			}
			for _, s := range recv.Spans() {
				for k, v := range s.Attrs {
					str := fmt.Sprint(v)
					if strings.Contains(str, key) || strings.Contains(str, "sk-") {
						t.Errorf("span %s: attribute %s holds the key: %q", s.Name, k, str)
					}
					if !content && strings.Contains(str, "content-marker-5519") {
						t.Errorf("span %s: attribute %s holds the prompt with content off: %q", s.Name, k, str)
					}
				}
			}
			in, _ := chat.Attrs["gen_ai.input.messages"].(string)
			outMsgs, _ := chat.Attrs["gen_ai.output.messages"].(string)
			if !content {
				if in != "" || outMsgs != "" {
					t.Errorf("content off: the chat span carries %q and %q", in, outMsgs)
				}
				return
			}
			var msgs []struct {
				Role  string `json:"role"`
				Parts []struct {
					Type, Content string
				} `json:"parts"`
			}
			if err := json.Unmarshal([]byte(in), &msgs); err != nil || len(msgs) != 1 || msgs[0].Role != "user" ||
				!strings.Contains(msgs[0].Parts[0].Content, marker) || !strings.Contains(msgs[0].Parts[0].Content, "[redacted GAFFER_TEST_OPENAI_KEY]") {
				t.Errorf("gen_ai.input.messages = %s (%v), want the architect's prompt with the goal, the key redacted", in, err)
			}
			if err := json.Unmarshal([]byte(outMsgs), &msgs); err != nil || len(msgs) != 1 || msgs[0].Role != "assistant" ||
				!strings.Contains(msgs[0].Parts[0].Content, "# Plan: a greeting") || !strings.Contains(msgs[0].Parts[0].Content, "given: [redacted") {
				t.Errorf("gen_ai.output.messages = %s (%v), want the plan, the key redacted (by the llm driver first)", outMsgs, err)
			}
		})
	}
}

// TestServeLinksASubmittedRunToItsSubmitter runs `gaffer serve` tracing
// to a real OTLP receiver and submits two runs to it: one by a `gaffer
// submit` that traces, under the caller's TRACEPARENT, and one by a
// submit whose telemetry is off. The first submitter's span is in the
// caller's trace, linked to its run's root, and the run's root (in the
// run's own trace, as resume needs) links back to it; the second run's
// root links nothing, and no second submit span exists.
func TestServeLinksASubmittedRunToItsSubmitter(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	recv, err := otlprecv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	dir, plan, script := demoRepo(t)
	on := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.Endpoint(), "OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="}
	s := startServeEnv(t, bin, dir, on)
	const linked, plain = "r-20260101-tracelink", "r-20260101-traceoff"
	const caller = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, c := range []struct {
		id  string
		env []string
	}{
		{linked, append(on, "TRACEPARENT=00-"+caller+"-00f067aa0ba902b7-01")},
		{plain, append(on, "OTEL_SDK_DISABLED=true")},
	} {
		if out, code := gafferCmdEnv(t, bin, c.env, "--repo", dir, "submit", "--plan", plan, "--script", script, "--run-id", c.id, "--auto-approve"); code != 0 {
			t.Fatalf("submit %s: exit %d\n%s", c.id, code, out)
		}
	}
	waitStatus(t, bin, dir, linked, "completed", s)
	waitStatus(t, bin, dir, plain, "completed", s)
	var roots map[string]otlprecv.Span
	var submits []otlprecv.Span
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		roots, submits = map[string]otlprecv.Span{}, nil
		for _, sp := range recv.Spans() {
			switch sp.Name {
			case "gaffer run":
				roots[fmt.Sprint(sp.Attrs["gaffer.run_id"])] = sp
			case "gaffer submit":
				submits = append(submits, sp)
			}
		}
		if len(roots) == 2 || time.Now().After(deadline) {
			break // a run's root is exported within the batch timeout of its end
		}
	}
	if len(submits) != 1 || len(roots) != 2 {
		t.Fatalf("got %d submit spans and the roots of %d runs, want 1 and 2\nserve:\n%s", len(submits), len(roots), s.output())
	}
	sub := submits[0]
	if sub.TraceID != caller || sub.Attrs["gaffer.run_id"] != linked || len(sub.Links) != 1 ||
		sub.Links[0].TraceID != telemetry.TraceID(linked).String() || sub.Links[0].SpanID != telemetry.RootSpanID(linked).String() {
		t.Errorf("submit span: trace %s attrs %v links %+v; want in the caller's trace, linked to %s's root", sub.TraceID, sub.Attrs, sub.Links, linked)
	}
	r := roots[linked]
	if r.TraceID != telemetry.TraceID(linked).String() || len(r.Links) != 1 || r.Links[0].TraceID != sub.TraceID || r.Links[0].SpanID != sub.SpanID {
		t.Errorf("%s's root: trace %s links %+v; want the run's trace linked to the submit span %s/%s", linked, r.TraceID, r.Links, sub.TraceID, sub.SpanID)
	}
	if r := roots[plain]; len(r.Links) != 0 {
		t.Errorf("%s (submitted with telemetry off) links %+v", plain, r.Links)
	}
}
