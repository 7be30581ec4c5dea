package nodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// PhaseChunk is how many phase states one checkpoint value holds.
const PhaseChunk = 32

// phasesKey names the value that says how the phase states are split:
// {"count":N,"chunk":PhaseChunk}. The states themselves are the values
// phasesKey+".0", phasesKey+".1", …, PhaseChunk (the last fewer) each.
const phasesKey = "progress.phases"

// outboxKey names the outbox's value (state.ExecutionState.Outbox), which
// checkpoints written before it existed lack.
const outboxKey = "outbox"

// phaseIndex is the value of phasesKey.
type phaseIndex struct {
	Count int `json:"count"`
	Chunk int `json:"chunk"`
}

// Codec is the workflow's state codec (pass it to Compile with
// graph.WithCodec). It stores the state as graph.JSONCodec does, one value
// per field, except that Progress.Phases, which grows with the plan, is
// split into values of PhaseChunk phase states each. A step changes one
// phase, so it changes one chunk; the stores keep values content-addressed,
// so the other chunks are not written again and a checkpoint costs about
// the same for a 600-phase plan as for a 10-phase one.
//
// Decode reads the checkpoints of earlier gaffers too (the phase states
// inside the "progress" value; no "outbox" value; the run's one cursor in
// the progress, before lanes: state.MigrateV1), so old stores stay
// readable.
//
// Encode also remembers, for each of the last few runs it encoded, the
// plan and each chunk it last encoded with their bytes, and reuses the
// bytes of those that are unchanged (state.Plan.Equal,
// state.PhaseState.Equal: comparing allocates nothing), so a step encodes
// the chunk it changed, not the plan and every phase: the same bytes, at
// the cost of the phase.
type Codec struct {
	inner *graph.JSONCodec[state.ExecutionState]

	mu   sync.Mutex
	runs []*encoded // most recently used first; at most encodedRuns
}

// encodedRuns is how many runs' encodings a Codec remembers: the runs a
// process steps at once, usually one.
const encodedRuns = 8

// encoded is what a Codec last encoded for one run: deep copies of the
// plan and of each chunk of phase states, so that a state changed in
// place after Encode cannot make them look unchanged.
type encoded struct {
	run       string
	plan      state.Plan
	planBytes []byte // nil until the plan is encoded
	chunks    []encodedChunk
}

type encodedChunk struct {
	phases []state.PhaseState
	bytes  []byte
}

var _ graph.Codec[state.ExecutionState] = (*Codec)(nil)

// NewCodec returns the workflow's state codec.
func NewCodec() *Codec {
	return &Codec{inner: graph.NewJSONCodec[state.ExecutionState]()}
}

func chunkKey(k int) string { return phasesKey + "." + strconv.Itoa(k) }

// Encode implements graph.Codec.
func (c *Codec) Encode(s state.ExecutionState) (map[string][]byte, error) {
	phases, plan := s.Progress.Phases, s.Plan
	s.Progress.Phases, s.Plan = nil, state.Plan{} // s is a copy: the caller's state is not touched
	out, err := c.inner.Encode(s)
	if err != nil {
		return nil, err
	}
	idx, err := json.Marshal(phaseIndex{Count: len(phases), Chunk: PhaseChunk})
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s: %w", graph.ErrCodec, phasesKey, err)
	}
	out[phasesKey] = idx
	if s.Progress.Lane != 0 && len(plan.Phases) == 0 {
		// A lane's result (laneResult): small, and not the run's state,
		// so it does not displace what the run's last encoding left.
		return encodeLaneResult(out, plan, phases)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.encodedFor(s.Run.ID)
	if e.planBytes == nil || !e.plan.Equal(plan) {
		b, err := json.Marshal(plan)
		if err != nil {
			return nil, fmt.Errorf("%w: encode field %s: %w", graph.ErrCodec, planKey, err)
		}
		e.plan, e.planBytes = plan.Clone(), b
	}
	out[planKey] = e.planBytes
	n := (len(phases) + PhaseChunk - 1) / PhaseChunk
	if len(e.chunks) != n {
		e.chunks = make([]encodedChunk, n)
	}
	for k := range n {
		part := phases[k*PhaseChunk : min(len(phases), (k+1)*PhaseChunk)]
		ch := &e.chunks[k]
		if ch.bytes == nil || !slices.EqualFunc(ch.phases, part, state.PhaseState.Equal) {
			b, err := json.Marshal(part)
			if err != nil {
				return nil, fmt.Errorf("%w: encode %s: %w", graph.ErrCodec, chunkKey(k), err)
			}
			ch.phases = ch.phases[:0]
			for _, ps := range part {
				ch.phases = append(ch.phases, ps.Clone())
			}
			ch.bytes = b
		}
		out[chunkKey(k)] = ch.bytes
	}
	return out, nil
}

// encodeLaneResult adds the plan and the phase states of a lane's result
// to out, encoded as they are.
func encodeLaneResult(out map[string][]byte, plan state.Plan, phases []state.PhaseState) (map[string][]byte, error) {
	b, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("%w: encode field %s: %w", graph.ErrCodec, planKey, err)
	}
	out[planKey] = b
	for k := 0; k*PhaseChunk < len(phases); k++ {
		if out[chunkKey(k)], err = json.Marshal(phases[k*PhaseChunk : min(len(phases), (k+1)*PhaseChunk)]); err != nil {
			return nil, fmt.Errorf("%w: encode %s: %w", graph.ErrCodec, chunkKey(k), err)
		}
	}
	return out, nil
}

// planKey names the plan's value, as graph.JSONCodec names it.
const planKey = "plan"

// encodedFor returns what c remembers of run, made the most recently
// used, or a new empty record in place of the least recently used one.
// c.mu is held.
func (c *Codec) encodedFor(run string) *encoded {
	i := slices.IndexFunc(c.runs, func(e *encoded) bool { return e.run == run })
	var e *encoded
	switch {
	case i >= 0:
		e = c.runs[i]
		c.runs = slices.Delete(c.runs, i, i+1)
	default:
		e = &encoded{run: run}
		if len(c.runs) == encodedRuns {
			c.runs = c.runs[:encodedRuns-1]
		}
	}
	c.runs = slices.Insert(c.runs, 0, e)
	return e
}

// Decode implements graph.Codec. Like graph.JSONCodec it is strict: a
// missing or unknown value or field is an error.
func (c *Codec) Decode(values map[string][]byte) (state.ExecutionState, error) {
	s, cursor, v1, err := c.decode(values)
	if err != nil || !v1 {
		return s, err
	}
	return state.MigrateV1(s, cursor), nil
}

// decode decodes values, taking schema 1's cursor out of the progress
// (v1 true when it was there) for Decode to migrate.
func (c *Codec) decode(values map[string][]byte) (s state.ExecutionState, cursor state.CursorV1, v1 bool, err error) {
	if _, ok := values[outboxKey]; !ok {
		// Written before runs had an outbox: an empty one.
		values = maps.Clone(values)
		values[outboxKey] = []byte("{}")
	}
	if p, ok := values[progressKey]; ok {
		rest, cur, found, err := state.CutCursorV1(p)
		if err != nil {
			return s, cursor, false, fmt.Errorf("%w: decode %s: %w", graph.ErrCodec, progressKey, err)
		}
		if found {
			// Written before lanes: the run's one cursor is the current
			// phase's lane now.
			values = maps.Clone(values)
			values[progressKey], cursor, v1 = rest, cur, true
		}
	}
	s, err = c.decodeChunked(values)
	return s, cursor, v1, err
}

// progressKey names the progress's value, as graph.JSONCodec names it.
const progressKey = "progress"

// decodeChunked decodes values whose phase states are chunked (or, from
// an older gaffer, inside the progress).
func (c *Codec) decodeChunked(values map[string][]byte) (state.ExecutionState, error) {
	raw, chunked := values[phasesKey]
	if !chunked {
		return c.inner.Decode(values) // written before the phases were split
	}
	rest := make(map[string][]byte, len(values))
	chunks := make(map[string][]byte)
	for k, v := range values {
		switch {
		case k == phasesKey:
		case strings.HasPrefix(k, phasesKey+"."):
			chunks[k] = v
		default:
			rest[k] = v
		}
	}
	s, err := c.inner.Decode(rest)
	if err != nil {
		return s, err
	}
	if s.Progress.Phases != nil {
		return s, fmt.Errorf("%w: phase states both in %q and in %s", graph.ErrCodec, "progress", phasesKey)
	}
	var idx phaseIndex
	if err := strictJSON(raw, &idx); err != nil {
		return s, fmt.Errorf("%w: decode %s: %w", graph.ErrCodec, phasesKey, err)
	}
	if idx.Count < 0 || idx.Chunk <= 0 {
		return s, fmt.Errorf("%w: decode %s: bad count %d or chunk %d", graph.ErrCodec, phasesKey, idx.Count, idx.Chunk)
	}
	var phases []state.PhaseState
	if idx.Count > 0 {
		phases = make([]state.PhaseState, 0, idx.Count)
	}
	for k := 0; k*idx.Chunk < idx.Count; k++ {
		name := chunkKey(k)
		b, ok := chunks[name]
		if !ok {
			return s, fmt.Errorf("%w: %w %q", graph.ErrCodec, graph.ErrMissingField, name)
		}
		delete(chunks, name)
		var part []state.PhaseState
		if err := strictJSON(b, &part); err != nil {
			return s, fmt.Errorf("%w: decode %s: %w", graph.ErrCodec, name, err)
		}
		if want := min(idx.Chunk, idx.Count-k*idx.Chunk); len(part) != want {
			return s, fmt.Errorf("%w: decode %s: %d phase states, want %d", graph.ErrCodec, name, len(part), want)
		}
		phases = append(phases, part...)
	}
	for name := range chunks {
		return s, fmt.Errorf("%w: %w %q", graph.ErrCodec, graph.ErrUnknownField, name)
	}
	s.Progress.Phases = phases
	return s, nil
}

func strictJSON(b []byte, dst any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
