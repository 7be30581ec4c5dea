package nodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

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
// inside the "progress" value; no "outbox" value), so old stores stay
// readable.
type Codec struct {
	inner *graph.JSONCodec[state.ExecutionState]
}

var _ graph.Codec[state.ExecutionState] = (*Codec)(nil)

// NewCodec returns the workflow's state codec.
func NewCodec() *Codec {
	return &Codec{inner: graph.NewJSONCodec[state.ExecutionState]()}
}

func chunkKey(k int) string { return phasesKey + "." + strconv.Itoa(k) }

// Encode implements graph.Codec.
func (c *Codec) Encode(s state.ExecutionState) (map[string][]byte, error) {
	phases := s.Progress.Phases
	s.Progress.Phases = nil // s is a copy: the caller's state is not touched
	out, err := c.inner.Encode(s)
	if err != nil {
		return nil, err
	}
	idx, err := json.Marshal(phaseIndex{Count: len(phases), Chunk: PhaseChunk})
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s: %w", graph.ErrCodec, phasesKey, err)
	}
	out[phasesKey] = idx
	for k := 0; k*PhaseChunk < len(phases); k++ {
		b, err := json.Marshal(phases[k*PhaseChunk : min(len(phases), (k+1)*PhaseChunk)])
		if err != nil {
			return nil, fmt.Errorf("%w: encode %s: %w", graph.ErrCodec, chunkKey(k), err)
		}
		out[chunkKey(k)] = b
	}
	return out, nil
}

// Decode implements graph.Codec. Like graph.JSONCodec it is strict: a
// missing or unknown value or field is an error.
func (c *Codec) Decode(values map[string][]byte) (state.ExecutionState, error) {
	if _, ok := values[outboxKey]; !ok {
		// Written before runs had an outbox: an empty one.
		values = maps.Clone(values)
		values[outboxKey] = []byte("{}")
	}
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
