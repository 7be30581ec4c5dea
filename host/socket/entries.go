package socket

import (
	"encoding/json"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/listing"
)

// entriesAnswer is the answer of the entries operation: List as one
// binary record (listing.EncodeRows), compressed with zstd (packEntries).
// As a JSON list of runs (the runs operation), 10,000 runs were 12 MB,
// which each side went through several times (the socket's envelope,
// then the answer) and the client took 110 ms to decode.
type entriesAnswer struct {
	Blob []byte `json:"blob"`
}

// packEntries is es's record, compressed.
func packEntries(es []host.ListEntry) ([]byte, error) {
	rows, err := rowsOf(es)
	if err != nil {
		return nil, err
	}
	b, err := listing.EncodeRows(rows)
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
	rows, err := listing.DecodeRows(b)
	if err != nil {
		return nil, err
	}
	return listedOfRows(rows)
}

// maxEntriesRecord bounds an entries record as it is decompressed: the
// socket's bound on an answer.
const maxEntriesRecord = 1 << 30

// rowsOf is es as a listing's rows: each run through its store record,
// or whole as its status's JSON.
func rowsOf(es []host.ListEntry) ([]listing.Row, error) {
	rows := make([]listing.Row, len(es))
	for i := range es {
		r := listedOf(&es[i])
		if r.Info != nil {
			rows[i] = listing.Row{Info: r.Info, Status: r.Status, Stopped: r.Stopped, LastError: r.LastError}
			continue
		}
		whole, err := json.Marshal(r.Whole)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", es[i].RunID, err)
		}
		rows[i].Whole = whole
	}
	return rows, nil
}

// listedOfRows is rows as the runs they stand for.
func listedOfRows(rows []listing.Row) ([]listedRun, error) {
	out := make([]listedRun, len(rows))
	for i, r := range rows {
		if r.Info != nil {
			out[i] = listedRun{Info: r.Info, Status: r.Status, Stopped: r.Stopped, LastError: r.LastError}
			continue
		}
		var rs host.RunStatus
		if err := json.Unmarshal(r.Whole, &rs); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out[i].Whole = &rs
	}
	return out, nil
}
