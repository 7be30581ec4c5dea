package listing

import (
	"errors"
	"fmt"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Row is one run of a listing's record (EncodeRows): the store's record
// of the run, read through its summary, with what its holder tells of it
// (Status, Stopped, LastError); or, for a run read whole, its status as
// JSON (Whole).
type Row struct {
	Info      *checkpoint.RunInfo
	Status    string
	Stopped   bool
	LastError string
	Whole     []byte
}

// rowsVersion is the first byte of a listing's record.
const rowsVersion = 1

// EncodeRows encodes rows as one record: the version byte, the count,
// then each row as a kind (0: through its summary, 1: whole) and its
// fields, strings length-prefixed as in a summary. As a JSON list of
// runs, 10,000 runs were 12 MB, which each side of the socket went
// through several times and the client took 110 ms to decode.
func EncodeRows(rows []Row) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 64+len(rows)*768)}
	e.b = append(e.b, rowsVersion)
	e.int(int64(len(rows)))
	for _, r := range rows {
		if r.Info == nil {
			e.int(1)
			e.str(string(r.Whole))
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

// DecodeRows decodes what EncodeRows made; an error for anything else.
func DecodeRows(b []byte) ([]Row, error) {
	if len(b) == 0 || b[0] != rowsVersion {
		return nil, errors.New("not an entries record of this version")
	}
	d := decoder{b: b[1:], s: string(b[1:])}
	n := d.count()
	if d.err != nil {
		return nil, d.err
	}
	out := make([]Row, n)
	infos := make([]checkpoint.RunInfo, n)
	for i := range out {
		switch kind := d.int(); kind {
		case 1:
			out[i].Whole = []byte(d.str())
		case 0:
			in := &infos[i]
			in.RunID = d.str()
			in.Latest = uint64(d.int())
			in.Status = d.str()
			in.Time = d.time()
			if sum := d.str(); sum != "" {
				in.Summary = []byte(sum)
			}
			out[i] = Row{Info: in, Status: d.str(), Stopped: d.int() == 1, LastError: d.str()}
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
