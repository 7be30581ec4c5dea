package otlprecv

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Name                      string
	Start, End                time.Time
	Attrs                     map[string]any // string, int64, float64, bool or a string of another value
	Resource                  map[string]any
	StatusError               bool
	StatusMessage             string
	Links                     []Link
}

// Link is one of a span's links.
type Link struct {
	TraceID, SpanID string // hex
	TraceState      string
	Attrs           map[string]any
}

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	spans    []Span
	requests int
}

// Start starts a receiver on a free port of 127.0.0.1.
func Start() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("otlprecv: %w", err)
	}
	r := &Receiver{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.traces)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Endpoint is the base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) Endpoint() string { return "http://" + r.ln.Addr().String() }

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests returns how many export requests were received.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

func (r *Receiver) traces(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct+": this receiver takes application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, Span{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(),
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
					Attrs: attrs(s.GetAttributes()), Resource: res,
					StatusError:   s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
					StatusMessage: s.GetStatus().GetMessage(),
					Links:         links(s.GetLinks()),
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// links reads a span's links.
func links(ls []*tracepb.Span_Link) []Link {
	var out []Link
	for _, l := range ls {
		out = append(out, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId()),
			TraceState: l.GetTraceState(), Attrs: attrs(l.GetAttributes())})
	}
	return out
}

// attrs flattens OTLP key-values.
func attrs(kvs []*common.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *common.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *common.AnyValue_IntValue:
			m[kv.GetKey()] = x.IntValue
		case *common.AnyValue_DoubleValue:
			m[kv.GetKey()] = x.DoubleValue
		case *common.AnyValue_BoolValue:
			m[kv.GetKey()] = x.BoolValue
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}
