package pool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gaffer-dev/gaffer/host"
)

// The job spec serve's journal keeps for a run not started yet is tagged
// and versioned:
//
//	{"type": "gaffer.run", "version": 2, "run": {"run_id": "r-1", "goal": "…", …}}
//
// Version 1 was the command line's flag struct encoded with Go's field
// names and no tag ({"PlanFile": "…", "Goal": "…", …}); a journal written
// by a serve of that version still recovers (decodeJob reads both).
const (
	jobType    = "gaffer.run"
	jobVersion = 2
)

// jobSpec is the envelope of a journaled host.RunSpec.
type jobSpec struct {
	Type    string       `json:"type"`
	Version int          `json:"version"`
	Run     host.RunSpec `json:"run"`
}

// legacySpec is version 1: cli.RunOptions as the serve of that version
// wrote it.
type legacySpec struct {
	PlanFile    string
	Goal        string
	Driver      string
	Model       string
	Profile     string
	Script      string
	AutoApprove bool
	AllowDirty  bool
	Pace        time.Duration
	TrackerID   string
	RunID       string
	Repo        string
}

// encodeJob is the journal's record of spec.
func encodeJob(spec host.RunSpec) ([]byte, error) {
	return json.Marshal(jobSpec{Type: jobType, Version: jobVersion, Run: spec})
}

// decodeJob reads a journaled spec of any version this binary knows,
// strictly: an unknown type, version or field is an error naming it.
func decodeJob(b []byte) (host.RunSpec, error) {
	var tag struct {
		Type    string `json:"type"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &tag); err != nil {
		return host.RunSpec{}, fmt.Errorf("job spec: %w", err)
	}
	if tag.Type == "" && tag.Version == 0 {
		var l legacySpec
		if err := strictJSON(b, &l); err != nil {
			return host.RunSpec{}, fmt.Errorf("job spec (version 1): %w", err)
		}
		return host.RunSpec{RunID: l.RunID, PlanFile: l.PlanFile, Goal: l.Goal, Driver: l.Driver, Model: l.Model, Profile: l.Profile,
			Script: l.Script, AutoApprove: l.AutoApprove, AllowDirty: l.AllowDirty, Pace: l.Pace, TrackerID: l.TrackerID, Repo: l.Repo,
			InPlace: true}, nil // version 1 knew no other way
	}
	if tag.Type != jobType {
		return host.RunSpec{}, fmt.Errorf("job spec: type %q, want %q", tag.Type, jobType)
	}
	if tag.Version != jobVersion {
		return host.RunSpec{}, fmt.Errorf("job spec: version %d, this gaffer reads versions 1 and %d; finish the queued runs with the gaffer that queued them", tag.Version, jobVersion)
	}
	var j jobSpec
	if err := strictJSON(b, &j); err != nil {
		return host.RunSpec{}, fmt.Errorf("job spec: %w", err)
	}
	return j.Run, nil
}

// strictJSON decodes b into v, refusing unknown fields.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
