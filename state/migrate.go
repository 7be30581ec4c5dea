package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Schema version 1 (gaffer before lanes) kept one cursor per run in
// Progress: the current phase's index, its review iteration and the
// developer session to continue. Version 2 keeps them per lane
// (PhaseState.Lanes); the current phase is the last one started. A state
// of version 1 is read by taking the cursor out of its progress
// (CutCursorV1) and giving its phases lanes (MigrateV1): in version 1 one
// session did a phase's tasks in order, which is one lane.

// CursorV1 is the cursor of a schema 1 Progress.
type CursorV1 struct {
	CurrentPhase    int    `json:"current_phase"`
	ReviewIteration int    `json:"review_iteration"`
	DriverSessionID string `json:"driver_session_id,omitempty"`
}

// cursorKeysV1 are the JSON keys of CursorV1 in a schema 1 progress.
var cursorKeysV1 = []string{"current_phase", "review_iteration", "driver_session_id"}

// CutCursorV1 takes schema 1's cursor out of progress, an encoded
// Progress: it returns progress without the cursor's keys, the cursor,
// and whether progress had it (a schema 2 progress comes back as it is).
func CutCursorV1(progress []byte) ([]byte, CursorV1, bool, error) {
	var c CursorV1
	if !bytes.Contains(progress, []byte(`"current_phase"`)) {
		return progress, c, false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(progress, &fields); err != nil {
		return nil, c, false, fmt.Errorf("%w: schema 1 progress: %w", ErrDecode, err)
	}
	if _, ok := fields["current_phase"]; !ok {
		return progress, c, false, nil
	}
	cursor := map[string]json.RawMessage{}
	for _, k := range cursorKeysV1 {
		if v, ok := fields[k]; ok {
			cursor[k] = v
			delete(fields, k)
		}
	}
	b, err := json.Marshal(cursor)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		err = d.Decode(&c)
	}
	if err != nil {
		return nil, c, false, fmt.Errorf("%w: schema 1 progress cursor: %w", ErrDecode, err)
	}
	if c.CurrentPhase < 0 || c.ReviewIteration < 0 {
		return nil, c, false, fmt.Errorf("%w: schema 1 progress cursor: phase %d, review iteration %d", ErrDecode, c.CurrentPhase, c.ReviewIteration)
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, c, false, fmt.Errorf("%w: schema 1 progress: %w", ErrDecode, err)
	}
	return rest, c, true, nil
}

// MigrateV1 returns s, read from schema 1 without its cursor c, as schema
// 2 keeps it: every phase that started and has no lanes gets one lane of
// all its tasks (one session did them), its attempt the phase's, done for
// a completed phase and failed for a failed one; the current phase's
// lane takes the cursor's session and review iteration, and is done
// (awaiting review) when the phase is running with a finished session,
// else pending. s is not changed.
func MigrateV1(s ExecutionState, c CursorV1) ExecutionState {
	out := s
	out.Progress.Phases = slices.Clone(s.Progress.Phases)
	for i := range out.Progress.Phases {
		ps := &out.Progress.Phases[i]
		if ps.Lanes != nil || (ps.Attempt == 0 && ps.Status == PhasePending) {
			continue
		}
		var tasks []string
		if i < len(s.Plan.Phases) {
			tasks = slices.Clone(s.Plan.Phases[i].TaskIDs)
		}
		l := LaneProgress{Tasks: tasks, Attempt: ps.Attempt, Base: ps.PreCommit, StartedAt: ps.StartedAt, CompletedAt: ps.CompletedAt}
		switch {
		case ps.Status == PhaseCompleted:
			l.Status = LaneDone
		case ps.Status == PhaseFailed:
			l.Status, l.Error = LaneFailed, ps.Error
		case i == c.CurrentPhase:
			l.SessionID, l.Iteration = c.DriverSessionID, c.ReviewIteration
			if c.DriverSessionID != "" && ps.Status == PhaseRunning {
				l.Status, l.Error = LaneDone, ps.Error
				if ps.Error != "" {
					l.Status = LaneFailed
				}
			}
		}
		ps.Lanes = []LaneProgress{l}
	}
	return out
}
