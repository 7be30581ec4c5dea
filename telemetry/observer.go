package telemetry

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
)

// Observe turns one event of the host's runner into spans. Pass it to
// graph.Runner.Subscribe (Host.Subscribe). Events of subgraphs are left
// out.
func (t *Tracer) Observe(e graph.Event) { t.obs.observe(e) }

// observer keeps the open spans of the runs this process drives.
type observer struct {
	mu     sync.Mutex
	tracer trace.Tracer
	dir    string
	runs   map[string]*runSpans
	// content puts the model calls' prompts and completions, as their
	// events carry them, on their spans (Config.Content).
	content bool
	// links holds the submitter's span of each run serve was given with
	// one (Tracer.Link), until the run is done.
	links map[string]trace.SpanContext
}

func newObserver(t trace.Tracer, dir string, content bool) *observer {
	return &observer{tracer: t, dir: dir, runs: map[string]*runSpans{}, content: content, links: map[string]trace.SpanContext{}}
}

// runSpans is one run's open spans in this process.
type runSpans struct {
	id      string
	root    trace.Span
	rootCtx context.Context
	phase   trace.Span // the phase under way, or nil
	wait    trace.Span // the wait for an answer (the plan's approval), or nil
	nodes   map[string]*nodeSpan
	// calls holds the model and tool calls of the sessions under way,
	// by sessionKey, until the session's agent_usage makes their parent.
	calls map[string][]call
	jr    journal
}

// call is one model or tool call of a session, kept until its session's
// span is made.
type call struct {
	name       string
	start, end time.Time
	attrs      []attribute.KeyValue
	err        string
	chat       bool   // a model call: named "chat MODEL"
	model      string // a model call's model; "" takes its session's
}

// sessionKey names the session of an event: its node's branch, its lane
// and its role (a review node runs the reviewer, then the evaluator).
func sessionKey(e graph.Event, lane int, role string) string {
	return nodeKey(e) + "/" + strconv.Itoa(lane) + "/" + role
}

// nodeSpan is a node attempt's span; mark is where its next agent
// session starts (the node's start, or the previous session's end).
type nodeSpan struct {
	span trace.Span
	ctx  context.Context
	mark time.Time
}

// Attribute keys: the GenAI semantic conventions' and gaffer's own.
const (
	keyGenAISystem    = "gen_ai.system"
	keyGenAIModel     = "gen_ai.request.model"
	keyGenAIOperation = "gen_ai.operation.name"
	keyGenAIAgent     = "gen_ai.agent.name"
	keyInputTokens    = "gen_ai.usage.input_tokens"
	keyOutputTokens   = "gen_ai.usage.output_tokens"
	keyRunID          = "gaffer.run_id"
	keyPhase          = "gaffer.phase"
	keyAttempt        = "gaffer.attempt"
	keyNode           = "gaffer.node"
	keyCost           = "gaffer.cost_usd"
	keyCachedTokens   = "gaffer.usage.cached_tokens"
	keyCut            = "gaffer.cut"
	keyLane           = "gaffer.lane"
	keyGenAITool      = "gen_ai.tool.name"
	keyInputMessages  = "gen_ai.input.messages"
	keyOutputMessages = "gen_ai.output.messages"
)

// spanNames names the spans of the workflow's nodes.
var spanNames = map[string]string{
	"architect":            "plan",
	"validator":            "validate plan",
	"approval":             "approval",
	"phased_execution":     "develop",
	"review":               "review",
	"recover":              "recovery",
	"next_task":            "next task",
	"restore_user_changes": "restore user changes",
}

// inPhase reports whether node's spans belong under the phase under way.
func inPhase(node string) bool {
	switch node {
	case "phased_execution", "review", "recover", "lane", "combine":
		return true
	}
	return false
}

func nodeKey(e graph.Event) string { return e.Node + "/" + strconv.Itoa(e.Branch) }

func (o *observer) observe(e graph.Event) {
	if e.Namespace != "" || e.RunID == "" {
		return
	}
	switch e.Kind {
	case graph.RunStarted, graph.RunFinished, graph.RunInterrupted, graph.NodeStarted, graph.NodeFinished, graph.Custom:
	default:
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	at := e.Time
	if at.IsZero() {
		at = time.Now()
	}
	if e.Kind == graph.RunStarted {
		o.start(e.RunID, at)
		return
	}
	r := o.runs[e.RunID]
	if r == nil {
		return // telemetry started while the run was under way
	}
	switch e.Kind {
	case graph.RunFinished:
		o.finish(r, e, at)
	case graph.RunInterrupted:
		r.endWait(at) // a second question: the first was answered
		parent := r.rootCtx
		if r.phase != nil && inPhase(e.Node) {
			parent = trace.ContextWithSpan(r.rootCtx, r.phase)
		}
		name := "wait for answer"
		if e.Node == "approval" {
			name = "approval wait"
		}
		_, r.wait = o.tracer.Start(parent, name, trace.WithTimestamp(at), trace.WithAttributes(attribute.String(keyRunID, r.id), attribute.String(keyNode, e.Node)))
		r.jr.open(kindWait, "wait", name, r.wait, at, false)
	case graph.NodeStarted:
		o.nodeStarted(r, e, at)
	case graph.NodeFinished:
		n := r.nodes[nodeKey(e)]
		if n == nil {
			return
		}
		delete(r.nodes, nodeKey(e))
		o.orphans(r, nodeKey(e)+"/", n.ctx)
		var ie *graph.InterruptError
		if e.Err != nil && !errors.As(e.Err, &ie) {
			n.span.SetStatus(codes.Error, firstLine(e.Err.Error()))
		}
		n.span.End(trace.WithTimestamp(at))
		r.jr.close("node:" + nodeKey(e))
	case graph.Custom:
		o.custom(r, e, at)
	}
}

// start opens run id's root span, or reopens it and its phase from the
// journal a previous process left, ending what that one left open: the
// wait (answered now) and the node spans a crash cut.
func (o *observer) start(id string, at time.Time) {
	if r := o.runs[id]; r != nil {
		r.endWait(at)
		return
	}
	r := &runSpans{id: id, nodes: map[string]*nodeSpan{}, calls: map[string][]call{}, jr: openJournal(o.dir, id)}
	o.runs[id] = r
	tid := TraceID(id)
	base := withIDs(context.Background(), tid, RootSpanID(id))
	rootStart := at
	link := o.links[id]
	if rec, ok := r.jr.Recs["root"]; ok {
		rootStart = rec.Start
		if !link.IsValid() && rec.Link != "" {
			// Linked by the process that started the run.
			link, _ = ParseTraceParent(rec.Link, rec.LinkState)
		}
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(rootStart), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String(keyRunID, id))}
	if link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link, Attributes: []attribute.KeyValue{attribute.String(keyLink, "submitter")}}))
	}
	r.rootCtx, r.root = o.tracer.Start(base, "gaffer run", opts...)
	// The root's children take random span ids (the root's context
	// carries the one it asked for).
	r.rootCtx = withIDs(r.rootCtx, tid, trace.SpanID{})
	r.jr.openRoot(r.root, rootStart, link)
	for key, rec := range r.jr.Recs {
		sid, _ := trace.SpanIDFromHex(rec.SpanID)
		parent := r.rootCtx
		if rec.Phase && r.jr.Recs["phase"].SpanID != "" && key != "phase" {
			parent = o.reopenPhase(r) // cut spans of a phase go under it
		}
		switch rec.Kind {
		case kindPhase:
			o.reopenPhase(r)
		case kindWait:
			_, s := o.tracer.Start(withIDs(parent, tid, sid), rec.Name, trace.WithTimestamp(rec.Start), trace.WithAttributes(attribute.String(keyRunID, id)))
			s.End(trace.WithTimestamp(at))
			r.jr.close(key)
		case kindNode:
			_, s := o.tracer.Start(withIDs(parent, tid, sid), rec.Name, trace.WithTimestamp(rec.Start),
				trace.WithAttributes(attribute.String(keyRunID, id), attribute.Bool(keyCut, true)))
			s.SetStatus(codes.Error, "cut: the process stopped during the span (killed or crashed); the run resumed")
			end := r.jr.modified
			if end.Before(rec.Start) {
				end = rec.Start
			}
			s.End(trace.WithTimestamp(end))
			r.jr.close(key)
		}
	}
}

// reopenPhase reopens the journaled phase span when it is not open yet
// and returns its context.
func (o *observer) reopenPhase(r *runSpans) context.Context {
	if r.phase == nil {
		rec := r.jr.Recs["phase"]
		sid, _ := trace.SpanIDFromHex(rec.SpanID)
		_, r.phase = o.tracer.Start(withIDs(r.rootCtx, TraceID(r.id), sid), rec.Name, trace.WithTimestamp(rec.Start),
			trace.WithAttributes(attribute.String(keyRunID, r.id), attribute.Int(keyPhase, r.jr.Phase)))
	}
	return trace.ContextWithSpan(r.rootCtx, r.phase)
}

// finish handles the end of a Run or Resume call: a run done ends every
// span and its journal; an interrupted or failed call leaves the root
// and phase spans (and the wait) to the call that resumes it.
func (o *observer) finish(r *runSpans, e graph.Event, at time.Time) {
	for key, n := range r.nodes {
		o.orphans(r, key+"/", n.ctx)
		if e.Err != nil {
			n.span.SetStatus(codes.Error, firstLine(e.Err.Error()))
		}
		n.span.End(trace.WithTimestamp(at))
		r.jr.close("node:" + key)
	}
	delete(o.runs, r.id)
	if st, _ := e.Payload.(graph.Status); e.Err != nil || st != graph.Done {
		r.jr.release()
		return
	}
	delete(o.links, r.id)
	r.endWait(at)
	if r.phase != nil {
		r.phase.End(trace.WithTimestamp(at))
	}
	r.root.End(trace.WithTimestamp(at))
	r.jr.remove()
}

// endWait ends the wait for an answer, when one is open.
func (r *runSpans) endWait(at time.Time) {
	if r.wait != nil {
		r.wait.End(trace.WithTimestamp(at))
		r.wait = nil
		r.jr.close("wait")
	}
}

func (o *observer) nodeStarted(r *runSpans, e graph.Event, at time.Time) {
	parent := r.rootCtx
	attrs := []attribute.KeyValue{attribute.String(keyRunID, r.id), attribute.String(keyNode, e.Node)}
	if inPhase(e.Node) {
		if r.phase == nil {
			if _, ok := r.jr.Recs["phase"]; ok {
				o.reopenPhase(r)
			} else {
				name := "phase " + strconv.Itoa(r.jr.Phase)
				_, r.phase = o.tracer.Start(r.rootCtx, name, trace.WithTimestamp(at),
					trace.WithAttributes(attribute.String(keyRunID, r.id), attribute.Int(keyPhase, r.jr.Phase)))
				r.jr.open(kindPhase, "phase", name, r.phase, at, false)
			}
		}
		parent = trace.ContextWithSpan(r.rootCtx, r.phase)
		attrs = append(attrs, attribute.Int(keyPhase, r.jr.Phase), attribute.Int(keyAttempt, r.jr.Attempt))
	}
	name := spanNames[e.Node]
	if name == "" {
		name = e.Node
	}
	ctx, s := o.tracer.Start(parent, name, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	r.nodes[nodeKey(e)] = &nodeSpan{span: s, ctx: ctx, mark: at}
	r.jr.open(kindNode, "node:"+nodeKey(e), name, s, at, inPhase(e.Node))
}

// lane ends a span "lane N" for a lane's developer session that ended,
// under the phase under way (else under parent), from the session's
// start (its end less its duration): its tasks, attempt and status, an
// error status with the lane's error when it did not end done.
func (o *observer) lane(r *runSpans, parent context.Context, p events.LaneSession, at time.Time) {
	if r.phase != nil {
		parent = trace.ContextWithSpan(r.rootCtx, r.phase)
	}
	_, s := o.tracer.Start(parent, "lane "+strconv.Itoa(p.Lane), trace.WithTimestamp(at.Add(-max(p.Duration, 0))), trace.WithAttributes(
		attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase), attribute.Int(keyAttempt, p.Attempt),
		attribute.Int(keyLane, p.Lane), attribute.StringSlice("gaffer.lane.tasks", p.Tasks),
		attribute.String("gaffer.lane.status", p.Status)))
	if p.Status != events.LaneDone {
		s.SetStatus(codes.Error, firstLine(p.Status+": "+p.Error))
	}
	s.End(trace.WithTimestamp(at))
}

// custom handles the workflow's own events (package events).
func (o *observer) custom(r *runSpans, e graph.Event, at time.Time) {
	n := r.nodes[nodeKey(e)]
	parent := r.rootCtx
	if n != nil {
		parent = n.ctx
	}
	switch p := e.Payload.(type) {
	case events.AgentUsage:
		start := at
		if n != nil {
			start = n.mark
			n.mark = at
		}
		key := sessionKey(e, p.Lane, p.Role)
		calls := r.calls[key]
		delete(r.calls, key)
		if len(calls) > 0 && calls[0].start.Before(start) {
			start = calls[0].start
		}
		ctx, s := o.tracer.Start(parent, "invoke_agent "+p.Role, trace.WithTimestamp(start), trace.WithAttributes(
			attribute.String(keyGenAIOperation, "invoke_agent"),
			attribute.String(keyGenAISystem, genAISystem(p.Model)),
			attribute.String(keyGenAIModel, p.Model),
			attribute.String(keyGenAIAgent, p.Role),
			attribute.Int(keyInputTokens, p.InputTokens),
			attribute.Int(keyOutputTokens, p.OutputTokens),
			attribute.Int(keyCachedTokens, p.CachedTokens),
			attribute.Float64(keyCost, p.CostUSD),
			attribute.String(keyRunID, r.id)))
		o.calls(ctx, calls, p.Model)
		s.End(trace.WithTimestamp(at))
	case events.ModelCall:
		key := sessionKey(e, p.Lane, p.Role)
		attrs := []attribute.KeyValue{
			attribute.String(keyGenAIOperation, "chat"),
			attribute.Int(keyInputTokens, p.InputTokens),
			attribute.Int(keyOutputTokens, p.OutputTokens),
			attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase), attribute.Int(keyLane, p.Lane),
			attribute.String(keyGenAIAgent, p.Role)}
		if o.content && p.InputMessages != "" {
			attrs = append(attrs, attribute.String(keyInputMessages, p.InputMessages), attribute.String(keyOutputMessages, p.OutputMessages))
		}
		r.calls[key] = append(r.calls[key], call{name: "chat", start: p.Start, end: p.Start.Add(p.Duration), err: p.Error,
			chat: true, model: p.Model, attrs: attrs})
	case events.ToolCall:
		key := sessionKey(e, p.Lane, p.Role)
		r.calls[key] = append(r.calls[key], call{name: "execute_tool " + p.Tool, start: p.Start, end: p.Start.Add(p.Duration), err: p.Error,
			attrs: []attribute.KeyValue{
				attribute.String(keyGenAIOperation, "execute_tool"), attribute.String(keyGenAITool, p.Tool),
				attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase), attribute.Int(keyLane, p.Lane),
				attribute.String(keyGenAIAgent, p.Role)}})
	case events.GitWork:
		_, s := o.tracer.Start(parent, "git "+p.Op, trace.WithTimestamp(p.Start), trace.WithAttributes(
			attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase), attribute.Int(keyLane, p.Lane), attribute.String("gaffer.git.op", p.Op)))
		if p.Error != "" {
			s.SetStatus(codes.Error, firstLine(p.Error))
		}
		s.End(trace.WithTimestamp(p.Start.Add(p.Duration)))
	case events.Review:
		if n != nil {
			n.span.SetAttributes(attribute.Bool("gaffer.review.approved", p.Approved), attribute.Int("gaffer.review.iteration", p.Iteration))
		}
	case events.PhaseFinished:
		if r.phase != nil {
			r.phase.SetAttributes(attribute.String("gaffer.outcome", p.Outcome), attribute.Int(keyAttempt, p.Attempt))
		}
		switch p.Outcome {
		case events.OutcomeRetried:
			r.jr.setPhase(r.jr.Phase, p.Attempt) // a review iteration or another attempt follows
		default:
			if r.phase != nil {
				if p.Outcome != events.OutcomeCompleted {
					r.phase.SetStatus(codes.Error, p.Outcome)
				}
				r.phase.End(trace.WithTimestamp(at))
				r.phase = nil
				r.jr.close("phase")
			}
			r.jr.setPhase(p.Phase+1, 1)
		}
	case events.LaneSession:
		if e.Name == events.EventLaneFinished {
			o.lane(r, parent, p, at)
		}
	case events.RunStatus:
		r.root.SetAttributes(attribute.String("gaffer.status", p.To))
	case events.RecoveryDecision:
		attrs := []attribute.KeyValue{attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase),
			attribute.String("gaffer.decision", p.Decision), attribute.String("gaffer.why", firstLine(p.Why))}
		if p.Lane != "" {
			attrs = append(attrs, attribute.String("gaffer.recovery.lanes", p.Lane))
		}
		o.point(parent, "recovery decision", at, attrs...)
	case events.RecoveryFailure:
		o.point(parent, "recovery failure", at, attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase),
			attribute.Int(keyAttempt, p.Attempt), attribute.String("gaffer.failure.category", p.Category))
	case events.DoctorCall:
		o.point(parent, "doctor", at, attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase),
			attribute.String("gaffer.doctor.tier", p.Tier), attribute.String("gaffer.doctor.action", p.Action))
	case events.Replan:
		o.point(parent, "replan", at, attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase), attribute.String("gaffer.outcome", p.Outcome))
	case events.StuckDecision:
		o.point(parent, "stuck decision", at, attribute.String(keyRunID, r.id), attribute.Int(keyPhase, p.Phase),
			attribute.String("gaffer.decision", p.Decision), attribute.String("gaffer.why", firstLine(p.Why)))
	}
}

// calls makes the spans of a session's model and tool calls under
// parent, a model call that names no model taking model.
func (o *observer) calls(parent context.Context, calls []call, model string) {
	for _, c := range calls {
		attrs, name := c.attrs, c.name
		if m := cmp.Or(c.model, model); c.chat && m != "" {
			name += " " + m
			attrs = append(attrs, attribute.String(keyGenAIModel, m), attribute.String(keyGenAISystem, genAISystem(m)))
		}
		_, s := o.tracer.Start(parent, name, trace.WithTimestamp(c.start), trace.WithAttributes(attrs...))
		if c.err != "" {
			s.SetStatus(codes.Error, firstLine(c.err))
		}
		s.End(trace.WithTimestamp(c.end))
	}
}

// orphans makes the spans of the calls of the sessions under prefix
// (a node's) that ended without their agent_usage, under the node's span.
func (o *observer) orphans(r *runSpans, prefix string, parent context.Context) {
	for key, calls := range r.calls {
		if strings.HasPrefix(key, prefix) {
			o.calls(parent, calls, "")
			delete(r.calls, key)
		}
	}
}

// point records a decision as a span of no duration under parent.
func (o *observer) point(parent context.Context, name string, at time.Time, attrs ...attribute.KeyValue) {
	_, s := o.tracer.Start(parent, name, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	s.End(trace.WithTimestamp(at))
}

// genAISystem names a model's provider as gen_ai.system does.
func genAISystem(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.Contains(m, "codex"):
		return "openai"
	}
	return "_OTHER"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
