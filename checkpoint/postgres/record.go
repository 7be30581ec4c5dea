package postgres

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// record is a checkpoint as stored in checkpoints.record, without its run
// id and seq (columns) and with its large values replaced by the index of
// their blob in checkpoints.refs. It is JSON: nil and empty slices and maps
// stay distinct (null against [] and {}), and so do nil and empty values.
type record struct {
	Version   int                   `json:"v"`
	Step      int                   `json:"s,omitempty"`
	Ran       []string              `json:"r"`
	Next      []string              `json:"n"`
	Values    map[string]any        `json:"x"` // nil, base64 string (inline) or number (blob index)
	Interrupt *checkpoint.Interrupt `json:"i,omitempty"`
	Status    string                `json:"st,omitempty"`
	Meta      map[string]string     `json:"m"`
	Time      []int64               `json:"t,omitempty"` // unix seconds and nanoseconds; absent for the zero time
}

// blob is a value stored once per run under its SHA-256.
type blob struct {
	sum  [sha256.Size]byte
	data []byte
}

// encoded is a checkpoint ready for the checkpoints table.
type encoded struct {
	record []byte
	refs   [][]byte // the blob sums the record refers to, by index
	blobs  []blob   // the blobs themselves, one per ref
}

// encode turns cp into its record, moving values longer than threshold to
// blobs.
func encode(cp checkpoint.Checkpoint, threshold int) (encoded, error) {
	var e encoded
	r := record{Version: checkpoint.SchemaVersion, Step: cp.Step, Ran: cp.Ran, Next: cp.Next,
		Interrupt: cp.Interrupt, Status: cp.Status, Meta: cp.Meta}
	if !cp.Time.IsZero() {
		r.Time = []int64{cp.Time.Unix(), int64(cp.Time.Nanosecond())}
	}
	if cp.Values != nil {
		r.Values = make(map[string]any, len(cp.Values))
		index := map[[sha256.Size]byte]int{}
		for _, k := range slices.Sorted(maps.Keys(cp.Values)) {
			v := cp.Values[k]
			switch {
			case v == nil:
				r.Values[k] = nil
			case len(v) > threshold:
				sum := sha256.Sum256(v)
				i, ok := index[sum]
				if !ok {
					i = len(e.blobs)
					index[sum] = i
					e.blobs = append(e.blobs, blob{sum: sum, data: v})
					e.refs = append(e.refs, e.blobs[i].sum[:])
				}
				r.Values[k] = i
			default:
				r.Values[k] = base64.StdEncoding.EncodeToString(v)
			}
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return e, fmt.Errorf("%w: run %s seq %d: %v", checkpoint.ErrInvalid, cp.RunID, cp.Seq, err)
	}
	e.record = b
	return e, nil
}

// same reports whether a stored record and its refs are e's.
func (e encoded) same(rec []byte, refs [][]byte) bool {
	return bytes.Equal(e.record, rec) && slices.EqualFunc(e.refs, refs, bytes.Equal)
}

// decode rebuilds checkpoint seq of run from its record, its refs and the
// blobs' data (in the order of refs, nil where a blob is missing),
// checking each blob against its sum.
func decode(runID string, seq uint64, rec []byte, refs, data [][]byte) (checkpoint.Checkpoint, error) {
	corrupt := func(what string, err error) error {
		return &checkpoint.CorruptError{RunID: runID, Seq: seq, What: what, Err: err}
	}
	var r record
	if err := json.Unmarshal(rec, &r); err != nil {
		return checkpoint.Checkpoint{}, corrupt("checkpoint", err)
	}
	if r.Version != checkpoint.SchemaVersion {
		return checkpoint.Checkpoint{}, corrupt("checkpoint", fmt.Errorf("unknown schema version %d", r.Version))
	}
	if len(data) != len(refs) {
		return checkpoint.Checkpoint{}, corrupt("blob", fmt.Errorf("%d blobs for %d refs", len(data), len(refs)))
	}
	cp := checkpoint.Checkpoint{RunID: runID, Seq: seq, Parent: seq - 1, Step: r.Step, Ran: r.Ran, Next: r.Next,
		Interrupt: r.Interrupt, Status: r.Status, Meta: r.Meta}
	switch len(r.Time) {
	case 0:
	case 2:
		cp.Time = time.Unix(r.Time[0], r.Time[1])
	default:
		return checkpoint.Checkpoint{}, corrupt("checkpoint", fmt.Errorf("bad time %v", r.Time))
	}
	if r.Values != nil {
		cp.Values = make(map[string][]byte, len(r.Values))
	}
	for k, v := range r.Values {
		switch v := v.(type) {
		case nil:
			cp.Values[k] = nil
		case string:
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return checkpoint.Checkpoint{}, corrupt("checkpoint", fmt.Errorf("value %q: %v", k, err))
			}
			cp.Values[k] = b
		case float64:
			i := int(v)
			if float64(i) != v || i < 0 || i >= len(refs) {
				return checkpoint.Checkpoint{}, corrupt("checkpoint", fmt.Errorf("value %q refers to blob %v of %d", k, v, len(refs)))
			}
			if data[i] == nil {
				return checkpoint.Checkpoint{}, corrupt("blob", fmt.Errorf("value %q refers to missing blob %x", k, refs[i][:min(8, len(refs[i]))]))
			}
			if sum := sha256.Sum256(data[i]); !bytes.Equal(sum[:], refs[i]) {
				return checkpoint.Checkpoint{}, corrupt("blob", fmt.Errorf("value %q: blob %x does not match its hash", k, refs[i][:min(8, len(refs[i]))]))
			}
			cp.Values[k] = bytes.Clone(data[i])
		default:
			return checkpoint.Checkpoint{}, corrupt("checkpoint", fmt.Errorf("value %q has type %T", k, v))
		}
	}
	return cp, nil
}

// summary reads a run's status and time from the record of its latest
// checkpoint (no blob is needed for them).
func summary(runID string, seq uint64, rec []byte) (checkpoint.RunInfo, error) {
	var r struct {
		Version int     `json:"v"`
		Status  string  `json:"st"`
		Time    []int64 `json:"t"`
	}
	info := checkpoint.RunInfo{RunID: runID, Latest: seq}
	err := json.Unmarshal(rec, &r)
	if err == nil && r.Version != checkpoint.SchemaVersion {
		err = fmt.Errorf("unknown schema version %d", r.Version)
	}
	if err == nil && len(r.Time) != 0 && len(r.Time) != 2 {
		err = fmt.Errorf("bad time %v", r.Time)
	}
	if err != nil {
		return info, &checkpoint.CorruptError{RunID: runID, Seq: seq, What: "checkpoint", Err: err}
	}
	info.Status = r.Status
	if len(r.Time) == 2 {
		info.Time = time.Unix(r.Time[0], r.Time[1])
	}
	return info, nil
}
