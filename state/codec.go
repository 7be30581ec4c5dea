package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SchemaVersion is the version of the execution-state.json layout written
// by Encode. Decode reads this version only: a newer one is refused with
// ErrSchemaVersion instead of being read with fields missing.
const SchemaVersion = 1

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

// Decode reads a state written by Encode. It fails with ErrSchemaVersion
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
	case *v.SchemaVersion != SchemaVersion:
		return ExecutionState{}, fmt.Errorf("%w: %d (this gaffer reads %d)", ErrSchemaVersion, *v.SchemaVersion, SchemaVersion)
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
	return e.ExecutionState, nil
}
