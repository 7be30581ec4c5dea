package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SchemaVersion is the version of the layout written by Encode: 2 since
// the run's cursor went into the phases' lanes. Decode reads it and
// version 1, which it migrates (CutCursorV1, MigrateV1); a newer one is
// refused with ErrSchemaVersion instead of being read with fields missing.
const SchemaVersion = 2

// envelope is the encoded form: the state's fields with schema_version
// first.
type envelope struct {
	SchemaVersion int `json:"schema_version"`
	ExecutionState
}

// Encode returns s as indented JSON with a trailing newline, the form
// written to execution-state.json. Maps are written in key order, so equal
// states encode to equal bytes.
func Encode(s ExecutionState) ([]byte, error) {
	b, err := json.MarshalIndent(envelope{SchemaVersion: SchemaVersion, ExecutionState: s}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("state: encode: %w", err)
	}
	return append(b, '\n'), nil
}

// Decode reads a state written by Encode, or by a gaffer of schema
// version 1 (migrated: see MigrateV1). It fails with ErrSchemaVersion
// for a missing, newer or otherwise unknown schema version, and with
// ErrDecode for malformed JSON, unknown fields, values of the wrong type
// and trailing data.
func Decode(data []byte) (ExecutionState, error) {
	var v struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return ExecutionState{}, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	switch {
	case v.SchemaVersion == nil:
		return ExecutionState{}, fmt.Errorf("%w: no schema_version field", ErrDecode)
	case *v.SchemaVersion > SchemaVersion:
		return ExecutionState{}, fmt.Errorf("%w: %d is newer than %d, the newest this gaffer reads; upgrade gaffer",
			ErrSchemaVersion, *v.SchemaVersion, SchemaVersion)
	case *v.SchemaVersion != SchemaVersion && *v.SchemaVersion != 1:
		return ExecutionState{}, fmt.Errorf("%w: %d (this gaffer reads 1 and %d)", ErrSchemaVersion, *v.SchemaVersion, SchemaVersion)
	}
	var cursor CursorV1
	v1 := *v.SchemaVersion == 1
	if v1 {
		var err error
		if data, cursor, err = cutCursorIn(data); err != nil {
			return ExecutionState{}, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e envelope
	if err := dec.Decode(&e); err != nil {
		return ExecutionState{}, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ExecutionState{}, fmt.Errorf("%w: data after the state", ErrDecode)
	}
	if v1 {
		return MigrateV1(e.ExecutionState, cursor), nil
	}
	return e.ExecutionState, nil
}

// cutCursorIn takes schema 1's cursor out of an encoded state's progress
// (see CutCursorV1).
func cutCursorIn(data []byte) ([]byte, CursorV1, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, CursorV1{}, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	p, ok := top["progress"]
	if !ok {
		return data, CursorV1{}, nil
	}
	rest, cursor, _, err := CutCursorV1(p)
	if err != nil {
		return nil, cursor, err
	}
	top["progress"] = rest
	out, err := json.Marshal(top)
	if err != nil {
		return nil, cursor, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return out, cursor, nil
}
