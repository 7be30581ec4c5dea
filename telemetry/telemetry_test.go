package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/otlprecv"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestOffCreatesNoExporter: without an endpoint, or turned off by the
// block or the standard variables, Start creates nothing and the host
// subscribes nothing.
func TestOffCreatesNoExporter(t *testing.T) {
	no := false
	for name, c := range map[string]struct {
		cfg Config
		env func(string) string
	}{
		"unconfigured":      {Config{ServiceName: "x", Content: true}, envOf()},
		"enabled false":     {Config{Endpoint: "http://127.0.0.1:1", Enabled: &no}, envOf("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")},
		"OTEL_SDK_DISABLED": {Config{Endpoint: "http://127.0.0.1:1"}, envOf("OTEL_SDK_DISABLED", "true")},
		"exporter none":     {Config{}, envOf("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER", "none")},
	} {
		tr, err := Start(context.Background(), c.cfg, Options{Dir: t.TempDir(), Getenv: c.env})
		if tr != nil || err != nil {
			t.Errorf("%s: Start = %v, %v; want no tracer", name, tr, err)
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Errorf("%s: Shutdown of no tracer = %v", name, err)
		}
	}
	if !(Config{Endpoint: "http://127.0.0.1:4318"}).On(envOf()) || !(Config{}).On(envOf("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x")) {
		t.Error("an endpoint in the block or the environment does not turn telemetry on")
	}
}

// receiver starts an OTLP receiver on 127.0.0.1 that the test's end
// closes.
func receiver(t testing.TB) *otlprecv.Receiver {
	t.Helper()
	recv, err := otlprecv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Close() })
	return recv
}

// startTo starts a tracer of cfg that exports to recv (the standard
// endpoint variable names it) and journals in dir, as one process would.
func startTo(t *testing.T, recv *otlprecv.Receiver, cfg Config, dir string) *Tracer {
	t.Helper()
	tr, err := Start(context.Background(), cfg, Options{Dir: dir, Getenv: envOf("OTEL_EXPORTER_OTLP_ENDPOINT", recv.Endpoint())})
	if err != nil || tr == nil {
		t.Fatalf("Start = %v, %v", tr, err)
	}
	return tr
}

// shutdownSpans shuts tr down, so that it has exported everything, and
// returns the spans recv got, by id.
func shutdownSpans(t *testing.T, tr *Tracer, recv *otlprecv.Receiver) map[string]otlprecv.Span {
	t.Helper()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	byID := map[string]otlprecv.Span{}
	for _, s := range recv.Spans() {
		byID[s.SpanID] = s
	}
	return byID
}

// spanPath is s's name after its ancestors', root first, joined by " > ";
// byID holds every span of the trace by its id.
func spanPath(byID map[string]otlprecv.Span, s otlprecv.Span) string {
	p := s.Name
	for s.ParentID != "" {
		s = byID[s.ParentID]
		p = s.Name + " > " + p
	}
	return p
}

// feed sends events of run id to tr, one a millisecond apart from at.
type feed struct {
	tr *Tracer
	id string
	at time.Time
}

func (f *feed) ev(e graph.Event) {
	f.at = f.at.Add(time.Millisecond)
	e.RunID, e.Time = f.id, f.at
	f.tr.Observe(e)
}

// parkAtApproval sends the run's stop at the plan's approval: the
// approval node interrupted, then the run.
func (f *feed) parkAtApproval() {
	f.ev(graph.Event{Kind: graph.NodeStarted, Node: "approval"})
	f.ev(graph.Event{Kind: graph.NodeFinished, Node: "approval", Err: &graph.InterruptError{}})
	f.ev(graph.Event{Kind: graph.RunInterrupted, Node: "approval"})
	f.ev(graph.Event{Kind: graph.RunFinished, Payload: graph.Interrupted})
}

func (f *feed) node(name string, custom ...any) {
	f.ev(graph.Event{Kind: graph.NodeStarted, Node: name, Attempt: 1})
	for _, c := range custom {
		f.ev(graph.Event{Kind: graph.Custom, Node: name, Payload: c})
	}
	f.ev(graph.Event{Kind: graph.NodeFinished, Node: name, Attempt: 1})
}

// TestTraceAcrossProcessesAndACrash drives one run through three tracers
// sharing a journal directory, as three processes would: the first plans
// and stops at the approval, the second is "killed" in phase 1's
// development, the third resumes to the end. The receiver gets one trace
// with one root, the approval wait, the cut span marked, and the phases
// with their sessions' usage.
func TestTraceAcrossProcessesAndACrash(t *testing.T) {
	recv := receiver(t)
	dir := t.TempDir()
	start := func() *Tracer { return startTo(t, recv, Config{ServiceName: "gaffer-test"}, dir) }
	const id = "r-20260101-trace1"
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	usage := func(role string) events.AgentUsage {
		return events.AgentUsage{Role: role, Model: "claude-test", InputTokens: 1000, OutputTokens: 100, CostUSD: 0.0045}
	}

	a := &feed{tr: start(), id: id, at: t0}
	a.ev(graph.Event{Kind: graph.RunStarted, Payload: "run"})
	a.node("architect", usage("architect"))
	a.node("validator")
	a.parkAtApproval()
	if err := a.tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	b := &feed{tr: start(), id: id, at: a.at.Add(time.Minute)}
	b.ev(graph.Event{Kind: graph.RunStarted, Payload: "resume"})
	b.node("approval")
	b.ev(graph.Event{Kind: graph.NodeStarted, Node: "phased_execution"})
	// killed: what ended is sent, what is open is only in the journal
	if err := b.tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}

	c := &feed{tr: start(), id: id, at: b.at.Add(time.Minute)}
	c.ev(graph.Event{Kind: graph.RunStarted, Payload: "resume"})
	c.node("phased_execution", usage("developer"))
	c.node("review", usage("reviewer"), events.Review{Phase: 1, Iteration: 1, Approved: false},
		events.PhaseFinished{Phase: 1, Attempt: 1, Iteration: 1, Outcome: events.OutcomeRetried})
	c.node("phased_execution", usage("developer"))
	c.node("review", usage("reviewer"), events.Review{Phase: 1, Iteration: 2, Approved: true},
		events.PhaseFinished{Phase: 1, Attempt: 1, Iteration: 2, Outcome: events.OutcomeCompleted})
	c.node("phased_execution", usage("developer"))
	c.node("review", usage("reviewer"), events.Review{Phase: 2, Iteration: 1, Approved: true},
		events.PhaseFinished{Phase: 2, Attempt: 1, Iteration: 1, Outcome: events.OutcomeCompleted})
	c.ev(graph.Event{Kind: graph.RunFinished, Payload: graph.Done})
	if err := c.tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	spans := recv.Spans()
	byID := map[string]otlprecv.Span{}
	count := map[string]int{}
	for _, s := range spans {
		if s.TraceID != TraceID(id).String() {
			t.Errorf("span %s in trace %s, want the run's %s", s.Name, s.TraceID, TraceID(id))
		}
		if s.Resource["service.name"] != "gaffer-test" {
			t.Errorf("span %s: service.name %v", s.Name, s.Resource["service.name"])
		}
		byID[s.SpanID] = s
		count[s.Name]++
	}
	paths := map[string]int{}
	var cut []otlprecv.Span
	for _, s := range spans {
		paths[spanPath(byID, s)]++
		if s.Attrs[keyCut] == true {
			cut = append(cut, s)
		}
		if !s.End.After(s.Start) && !s.End.Equal(s.Start) {
			t.Errorf("span %s ends before it starts", s.Name)
		}
	}
	want := map[string]int{
		"gaffer run":        1,
		"gaffer run > plan": 1, "gaffer run > plan > invoke_agent architect": 1,
		"gaffer run > validate plan": 1, "gaffer run > approval": 2, "gaffer run > approval wait": 1,
		"gaffer run > phase 1": 1, "gaffer run > phase 1 > develop": 3, "gaffer run > phase 1 > review": 2,
		"gaffer run > phase 1 > develop > invoke_agent developer": 2, "gaffer run > phase 1 > review > invoke_agent reviewer": 2,
		"gaffer run > phase 2": 1, "gaffer run > phase 2 > develop": 1, "gaffer run > phase 2 > review": 1,
		"gaffer run > phase 2 > develop > invoke_agent developer": 1, "gaffer run > phase 2 > review > invoke_agent reviewer": 1,
	}
	for p, n := range want {
		if paths[p] != n {
			t.Errorf("%d spans %q, want %d", paths[p], p, n)
		}
	}
	if len(paths) != len(want) {
		t.Errorf("span tree = %v\nwant %v", paths, want)
	}
	if len(cut) != 1 || cut[0].Name != "develop" || !cut[0].StatusError {
		t.Fatalf("cut spans = %+v, want phase 1's first develop, status Error", cut)
	}
	for _, s := range spans {
		switch s.Name {
		case "gaffer run":
			if s.ParentID != "" || s.SpanID != RootSpanID(id).String() || !s.Start.Equal(t0.Add(time.Millisecond)) || s.Attrs[keyRunID] != id {
				t.Errorf("root = %+v, want the run's root from its first start", s)
			}
		case "invoke_agent developer":
			if s.Attrs[keyInputTokens] != int64(1000) || s.Attrs[keyOutputTokens] != int64(100) || s.Attrs[keyGenAISystem] != "anthropic" ||
				s.Attrs[keyGenAIModel] != "claude-test" || s.Attrs[keyCost] != 0.0045 || s.Attrs[keyGenAIOperation] != "invoke_agent" {
				t.Errorf("developer session attributes = %v", s.Attrs)
			}
			if p := byID[s.ParentID]; !s.Start.Equal(p.Start) {
				t.Errorf("the session starts at %v, its node at %v", s.Start, p.Start)
			}
		case "review":
			if _, ok := s.Attrs["gaffer.review.approved"]; !ok {
				t.Errorf("review span without its verdict: %v", s.Attrs)
			}
		}
	}
	if _, err := openJournalFile(dir, id); !errors.Is(err, errNoJournal) {
		t.Errorf("the journal of a run done is still there (%v)", err)
	}
}

// TestLaneSpansUnderTheirPhase: a phase of two lanes has a span per
// lane under the phase, from its session's start to its end, naming its
// tasks and status; the failed lane's span is an error with its cause.
func TestLaneSpansUnderTheirPhase(t *testing.T) {
	recv := receiver(t)
	tr := startTo(t, recv, Config{ServiceName: "gaffer-test"}, t.TempDir())
	const id = "r-20260101-lanes"
	f := &feed{tr: tr, id: id, at: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	f.ev(graph.Event{Kind: graph.RunStarted, Payload: "run"})
	f.node("phased_execution")
	lane := func(n int, task, status, why string) {
		l := events.LaneSession{RunID: id, Phase: 1, Lane: n, Attempt: 1, Tasks: []string{task}}
		f.ev(graph.Event{Kind: graph.NodeStarted, Node: "lane", Branch: n, Attempt: 1})
		f.ev(graph.Event{Kind: graph.Custom, Node: "lane", Branch: n, Name: events.EventLaneStarted, Payload: l})
		l.Status, l.Error, l.Duration = status, why, 40*time.Second
		f.at = f.at.Add(40 * time.Second)
		f.ev(graph.Event{Kind: graph.Custom, Node: "lane", Branch: n, Name: events.EventLaneFinished, Payload: l})
		f.ev(graph.Event{Kind: graph.NodeFinished, Node: "lane", Branch: n, Attempt: 1})
	}
	lane(1, "1", events.LaneDone, "")
	lane(2, "2", events.LaneFailed, "the bye tests fail")
	f.node("review", events.PhaseFinished{Phase: 1, Attempt: 1, Iteration: 1, Outcome: events.OutcomeCompleted, Lanes: 2})
	f.ev(graph.Event{Kind: graph.RunFinished, Payload: graph.Done})
	byID := shutdownSpans(t, tr, recv)
	lanes := map[string]otlprecv.Span{}
	for _, s := range byID {
		if strings.HasPrefix(s.Name, "lane ") {
			if p := byID[s.ParentID]; p.Name != "phase 1" {
				t.Errorf("span %s is under %q, want phase 1", s.Name, p.Name)
			}
			lanes[s.Name] = s
		}
	}
	l1, l2 := lanes["lane 1"], lanes["lane 2"]
	if len(lanes) != 2 || l1.End.Sub(l1.Start) != 40*time.Second || l1.StatusError || l1.Attrs["gaffer.lane.status"] != events.LaneDone {
		t.Fatalf("lane spans %+v", lanes)
	}
	if !l2.StatusError || l2.Attrs["gaffer.lane"] != int64(2) || l2.Attrs[keyPhase] != int64(1) {
		t.Errorf("the failed lane's span = %+v", l2)
	}
	if tasks := fmt.Sprint(l2.Attrs["gaffer.lane.tasks"]); !strings.Contains(tasks, `string_value:"2"`) || strings.Count(tasks, "string_value") != 1 { // the receiver prints an array attribute
		t.Errorf("lane 2's tasks = %#v", l2.Attrs["gaffer.lane.tasks"])
	}
}

// TestCallAndGitSpansUnderTheirParents: a session's model and tool calls
// are spans under its invoke_agent span, with their own start and end,
// the GenAI attributes (a call that names no model takes its session's)
// and an error status for a failed tool; git work is a span under the
// node that did it, within the phase; the calls of a session that ended
// without its usage go under its node, not under the node's next
// session.
func TestCallAndGitSpansUnderTheirParents(t *testing.T) {
	recv := receiver(t)
	tr := startTo(t, recv, Config{ServiceName: "gaffer-test"}, t.TempDir())
	const id = "r-20260101-calls"
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	f := &feed{tr: tr, id: id, at: t0}
	f.ev(graph.Event{Kind: graph.RunStarted, Payload: "run"})
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	f.at = sec(10)
	f.node("phased_execution",
		events.ModelCall{Role: "developer", Phase: 1, InputTokens: 900, OutputTokens: 90, Start: sec(11), Duration: 2 * time.Second},
		events.ToolCall{Role: "developer", Phase: 1, Tool: "write", Start: sec(13), Duration: time.Second},
		events.ToolCall{Role: "developer", Phase: 1, Tool: "run", Start: sec(14), Duration: 3 * time.Second, Error: "the tool reported an error"},
		events.ModelCall{Role: "developer", Phase: 1, Model: "gpt-escalated", InputTokens: 1000, OutputTokens: 10, Start: sec(17), Duration: time.Second},
		events.AgentUsage{Role: "developer", Model: "claude-test", InputTokens: 1900, OutputTokens: 100},
	)
	f.at = sec(30)
	f.node("review",
		events.ToolCall{Role: "reviewer", Phase: 1, Tool: "read", Start: sec(31), Duration: time.Second}, // no usage follows
		events.ModelCall{Role: "evaluator", Phase: 1, InputTokens: 7, OutputTokens: 7, Start: sec(32), Duration: time.Second},
		events.AgentUsage{Role: "evaluator", Model: "claude-test", InputTokens: 7, OutputTokens: 7},
		events.GitWork{Phase: 1, Op: events.GitCommit, Start: sec(35), Duration: 2 * time.Second},
		events.PhaseFinished{Phase: 1, Attempt: 1, Iteration: 1, Outcome: events.OutcomeRetried},
	)
	f.at = sec(40)
	f.ev(graph.Event{Kind: graph.NodeStarted, Node: "lane", Branch: 1, Attempt: 1})
	for _, c := range []any{
		events.GitWork{Phase: 1, Lane: 1, Op: events.GitWorktree, Start: sec(41), Duration: time.Second},
		events.ModelCall{Role: "developer", Phase: 1, Lane: 1, InputTokens: 5, OutputTokens: 5, Start: sec(42), Duration: time.Second},
		events.AgentUsage{Role: "developer", Model: "claude-test", Phase: 1, Lane: 1, InputTokens: 5, OutputTokens: 5},
		events.GitWork{Phase: 1, Lane: 1, Op: events.GitCommit, Start: sec(44), Duration: time.Second, Error: "git commit: exit status 128"},
	} {
		f.ev(graph.Event{Kind: graph.Custom, Node: "lane", Branch: 1, Payload: c})
	}
	f.ev(graph.Event{Kind: graph.NodeFinished, Node: "lane", Branch: 1, Attempt: 1})
	f.node("combine", events.GitWork{Phase: 1, Op: events.GitCombine, Start: f.at, Duration: time.Second})
	f.ev(graph.Event{Kind: graph.RunFinished, Payload: graph.Done})

	byID := shutdownSpans(t, tr, recv)
	got := map[string]otlprecv.Span{}
	for _, s := range byID {
		got[spanPath(byID, s)] = s
	}
	const dev = "gaffer run > phase 1 > develop > invoke_agent developer"
	for p, want := range map[string][2]time.Time{
		dev + " > chat claude-test":                                                 {sec(11), sec(13)},
		dev + " > execute_tool write":                                               {sec(13), sec(14)},
		dev + " > execute_tool run":                                                 {sec(14), sec(17)},
		dev + " > chat gpt-escalated":                                               {sec(17), sec(18)},
		"gaffer run > phase 1 > review > execute_tool read":                         {sec(31), sec(32)},
		"gaffer run > phase 1 > review > invoke_agent evaluator > chat claude-test": {sec(32), sec(33)},
		"gaffer run > phase 1 > review > git commit":                                {sec(35), sec(37)},
		"gaffer run > phase 1 > lane > git worktree":                                {sec(41), sec(42)},
		"gaffer run > phase 1 > lane > invoke_agent developer > chat claude-test":   {sec(42), sec(43)},
		"gaffer run > phase 1 > lane > git commit":                                  {sec(44), sec(45)},
	} {
		s, ok := got[p]
		if !ok {
			t.Errorf("no span %q", p)
			continue
		}
		if !s.Start.Equal(want[0]) || !s.End.Equal(want[1]) {
			t.Errorf("%s: %v..%v, want %v..%v", p, s.Start, s.End, want[0], want[1])
		}
	}
	if s, ok := got["gaffer run > phase 1 > combine > git combine"]; !ok || s.Attrs["gaffer.git.op"] != "combine" || s.StatusError {
		t.Errorf("the combine's span = %+v (found %v)", s, ok)
	}
	if s := got[dev]; !s.Start.Equal(sec(10).Add(time.Millisecond)) || s.Attrs[keyInputTokens] != int64(1900) {
		t.Errorf("the session = %+v, want from its node's start with its usage", s)
	}
	chat := got[dev+" > chat claude-test"]
	if chat.Attrs[keyGenAIOperation] != "chat" || chat.Attrs[keyGenAIModel] != "claude-test" || chat.Attrs[keyGenAISystem] != "anthropic" ||
		chat.Attrs[keyInputTokens] != int64(900) || chat.Attrs[keyOutputTokens] != int64(90) || chat.Attrs[keyRunID] != id || chat.Attrs[keyPhase] != int64(1) {
		t.Errorf("model call attributes = %v", chat.Attrs)
	}
	if m := got[dev+" > chat gpt-escalated"]; m.Attrs[keyGenAIModel] != "gpt-escalated" || m.Attrs[keyGenAISystem] != "openai" {
		t.Errorf("a call's own model: %v", m.Attrs)
	}
	if run, write := got[dev+" > execute_tool run"], got[dev+" > execute_tool write"]; !run.StatusError || write.StatusError || run.Attrs[keyGenAITool] != "run" {
		t.Errorf("tool spans: run %+v, write %+v; want run an error", run, write)
	}
	if c := got["gaffer run > phase 1 > lane > git commit"]; !c.StatusError || c.Attrs[keyLane] != int64(1) {
		t.Errorf("the failed lane commit = %+v", c)
	}
}
