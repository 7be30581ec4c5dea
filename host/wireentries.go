package host

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// entriesAnswer is the answer of the entries operation: Entries as one
// binary record (encodeEntries), compressed with zstd (packEntries). As a
// JSON list of runs (the runs operation), 10,000 runs were 12 MB, which
// each side went through several times (the socket's envelope, then the
// answer) and the client took 110 ms to decode.
type entriesAnswer struct {
	Blob []byte `json:"blob"`
}

// packEntries is es's record, compressed.
func packEntries(es []ListEntry) ([]byte, error) {
	b, err := encodeEntries(es)
	if err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(b, make([]byte, 0, len(b)/4)), nil
}

// unpackEntries reads what packEntries made.
func unpackEntries(blob []byte) ([]listedRun, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxEntriesRecord))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	b, err := dec.DecodeAll(blob, nil)
	if err != nil {
		return nil, err
	}
	return decodeEntries(b)
}

// maxEntriesRecord bounds an entries record as it is decompressed: the
// socket's bound on an answer.
const maxEntriesRecord = 1 << 30

// entriesVersion is the first byte of an entries record.
const entriesVersion = 1

// encodeEntries encodes es: the version byte, the count, then each entry
// as a kind (0: through its summary, 1: whole) and its fields, strings
// length-prefixed as in a summary. A whole run is its RunStatus's JSON.
func encodeEntries(es []ListEntry) ([]byte, error) {
	e := summaryEncoder{b: make([]byte, 0, 64+len(es)*768)}
	e.b = append(e.b, entriesVersion)
	e.int(int64(len(es)))
	for i := range es {
		r := listedOf(&es[i])
		if r.Info == nil {
			whole, err := json.Marshal(r.Whole)
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", es[i].RunID, err)
			}
			e.int(1)
			e.str(string(whole))
			continue
		}
		e.int(0)
		e.str(r.Info.RunID)
		e.int(int64(r.Info.Latest))
		e.str(r.Info.Status)
		if err := e.time(r.Info.Time); err != nil {
			return nil, err
		}
		e.str(string(r.Info.Summary))
		e.str(r.Status)
		stopped := int64(0)
		if r.Stopped {
			stopped = 1
		}
		e.int(stopped)
		e.str(r.LastError)
	}
	return e.b, nil
}

// decodeEntries decodes what encodeEntries made, as the runs it stands
// for; an error for anything else.
func decodeEntries(b []byte) ([]listedRun, error) {
	if len(b) == 0 || b[0] != entriesVersion {
		return nil, errors.New("not an entries record of this version")
	}
	d := summaryDecoder{b: b[1:], s: string(b[1:])}
	n := d.count()
	if d.err != nil {
		return nil, d.err
	}
	out := make([]listedRun, n)
	infos := make([]checkpoint.RunInfo, n)
	for i := range out {
		switch kind := d.int(); kind {
		case 1:
			var rs RunStatus
			if err := json.Unmarshal([]byte(d.str()), &rs); d.err == nil && err != nil {
				return nil, fmt.Errorf("entry %d: %w", i, err)
			}
			out[i].Whole = &rs
		case 0:
			in := &infos[i]
			in.RunID = d.str()
			in.Latest = uint64(d.int())
			in.Status = d.str()
			in.Time = d.time()
			if sum := d.str(); sum != "" {
				in.Summary = []byte(sum)
			}
			out[i] = listedRun{Info: in, Status: d.str(), Stopped: d.int() == 1, LastError: d.str()}
		default:
			d.fail(fmt.Errorf("entry %d of kind %d", i, kind))
		}
		if d.err != nil {
			return nil, d.err
		}
	}
	if len(d.b) > 0 {
		return nil, fmt.Errorf("%d bytes after the entries", len(d.b))
	}
	return out, nil
}
