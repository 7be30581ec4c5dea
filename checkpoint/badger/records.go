package badger

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Value kinds in a checkpoint record.
const (
	valNil    = 0
	valInline = 1
	valBlob   = 2
)

type blobRef = [sha256.Size]byte

// blob is a large value stored once, content-addressed, per run.
type blob struct {
	name string // the field of Checkpoint.Values it holds
	sum  blobRef
	data []byte
}

// encodeCheckpoint encodes cp. Values longer than threshold are returned as
// blobs and referenced by hash in the record. RunID and Seq live in the key.
func encodeCheckpoint(cp checkpoint.Checkpoint, threshold int) ([]byte, []blob) {
	return encodeCheckpointSums(cp, threshold, func(_ string, v []byte) blobRef { return sha256.Sum256(v) })
}

// encodeCheckpointSums is encodeCheckpoint with the blob hash given: sum
// must return the SHA-256 of v (the Badger store answers from a cache of
// the run's previous values).
func encodeCheckpointSums(cp checkpoint.Checkpoint, threshold int, sum func(name string, v []byte) blobRef) ([]byte, []blob) {
	e := newEncoder(128)
	var blobs []blob
	e.uvarint(cp.Seq - cp.Parent)
	e.varint(int64(cp.Step))
	e.strs(cp.Ran)
	e.strs(cp.Next)
	if cp.Values == nil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(len(cp.Values)) + 1)
		for _, k := range slices.Sorted(maps.Keys(cp.Values)) {
			v := cp.Values[k]
			e.str(k)
			switch {
			case v == nil:
				e.byte(valNil)
			case len(v) > threshold:
				b := blob{name: k, sum: sum(k, v), data: v}
				blobs = append(blobs, b)
				e.byte(valBlob)
				e.raw(b.sum[:])
				e.uvarint(uint64(len(v)))
			default:
				e.byte(valInline)
				e.bytes(v)
			}
		}
	}
	if in := cp.Interrupt; in == nil {
		e.byte(0)
	} else {
		e.byte(1)
		e.str(in.Node)
		e.str(in.TaskID)
		e.str(in.Kind)
		e.varint(int64(in.Index))
		e.bytes(in.Payload)
		if in.Answers == nil {
			e.uvarint(0)
		} else {
			e.uvarint(uint64(len(in.Answers)) + 1)
			for _, a := range in.Answers {
				e.bytes(a)
			}
		}
	}
	e.str(cp.Status)
	if cp.Meta == nil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(len(cp.Meta)) + 1)
		for _, k := range slices.Sorted(maps.Keys(cp.Meta)) {
			e.str(k)
			e.str(cp.Meta[k])
		}
	}
	e.time(cp.Time)
	return e.finish(), blobs
}

// cpRefs is a decoded checkpoint whose blob values are still references.
type cpRefs struct {
	cp   checkpoint.Checkpoint
	refs map[string]blobRef // value name -> blob
	lens map[string]uint64  // value name -> expected length
}

func decodeCheckpoint(runID string, seq uint64, rec []byte) (cpRefs, error) {
	d := newDecoder(rec)
	out := cpRefs{cp: checkpoint.Checkpoint{RunID: runID, Seq: seq}}
	cp := &out.cp
	delta := d.uvarint()
	if d.err == nil && (delta == 0 || delta > seq) {
		d.fail(fmt.Errorf("bad parent delta %d", delta))
	}
	cp.Parent = seq - delta
	cp.Step = int(d.varint())
	cp.Ran = d.strs()
	cp.Next = d.strs()
	if n, isNil := d.count(); !isNil {
		cp.Values = make(map[string][]byte, n)
		for range n {
			k := d.str()
			switch kind := d.byte(); kind {
			case valNil:
				cp.Values[k] = nil
			case valInline:
				cp.Values[k] = d.bytes()
			case valBlob:
				var r blobRef
				copy(r[:], d.take(uint64(len(r))))
				if out.refs == nil {
					out.refs, out.lens = make(map[string]blobRef), make(map[string]uint64)
				}
				out.refs[k], out.lens[k] = r, d.uvarint()
			default:
				d.fail(fmt.Errorf("bad value kind %d", kind))
			}
		}
	}
	switch flag := d.byte(); flag {
	case 0:
	case 1:
		in := &checkpoint.Interrupt{Node: d.str(), TaskID: d.str(), Kind: d.str(), Index: int(d.varint()), Payload: d.bytes()}
		if n, isNil := d.count(); !isNil {
			in.Answers = make([][]byte, n)
			for i := range in.Answers {
				in.Answers[i] = d.bytes()
			}
		}
		cp.Interrupt = in
	default:
		d.fail(fmt.Errorf("bad interrupt flag %d", flag))
	}
	cp.Status = d.str()
	if n, isNil := d.count(); !isNil {
		cp.Meta = make(map[string]string, n)
		for range n {
			k := d.str()
			cp.Meta[k] = d.str()
		}
	}
	cp.Time = d.time()
	if err := d.done(); err != nil {
		return cpRefs{}, &checkpoint.CorruptError{RunID: runID, Seq: seq, What: "checkpoint", Err: err}
	}
	return out, nil
}

// checkBlob verifies a blob read back from disk against its reference.
func checkBlob(runID string, seq uint64, name string, ref blobRef, want uint64, data []byte) error {
	if uint64(len(data)) != want || sha256.Sum256(data) != ref {
		return &checkpoint.CorruptError{RunID: runID, Seq: seq, What: "blob",
			Err: fmt.Errorf("value %q does not match its hash %x", name, ref[:8])}
	}
	return nil
}

func encodeWrite(w checkpoint.Write) []byte {
	e := newEncoder(32 + len(w.Value))
	e.str(w.TaskID)
	e.varint(int64(w.Index))
	e.str(w.Node)
	e.bytes(w.Value)
	return e.finish()
}

func decodeWrite(runID string, seq uint64, rec []byte) (checkpoint.Write, error) {
	d := newDecoder(rec)
	w := checkpoint.Write{TaskID: d.str(), Index: int(d.varint()), Node: d.str(), Value: d.bytes()}
	if err := d.done(); err != nil {
		return checkpoint.Write{}, &checkpoint.CorruptError{RunID: runID, Seq: seq, What: "write", Err: err}
	}
	return w, nil
}

func encodeLease(l checkpoint.Lease) []byte {
	e := newEncoder(64)
	e.str(l.Owner.ID)
	e.varint(int64(l.Owner.PID))
	e.str(l.Owner.Host)
	e.uvarint(l.Token)
	e.time(l.Expires)
	return e.finish()
}

func decodeLease(runID string, rec []byte) (checkpoint.Lease, error) {
	d := newDecoder(rec)
	l := checkpoint.Lease{RunID: runID, Owner: checkpoint.Owner{ID: d.str(), PID: int(d.varint()), Host: d.str()}, Token: d.uvarint(), Expires: d.time()}
	if err := d.done(); err != nil {
		return checkpoint.Lease{}, &checkpoint.CorruptError{RunID: runID, What: "lease", Err: err}
	}
	return l, nil
}

// runIndex is the small per-run record Put keeps current, so Latest and
// Runs need not scan checkpoints.
type runIndex struct {
	latest uint64
	stamp  int64 // store activity stamp of the last Put, orders Runs
	status string
	time   time.Time
}

func encodeIndex(x runIndex) []byte {
	e := newEncoder(32)
	e.uvarint(x.latest)
	e.varint(x.stamp)
	e.str(x.status)
	e.time(x.time)
	return e.finish()
}

func decodeIndex(runID string, rec []byte) (runIndex, error) {
	d := newDecoder(rec)
	x := runIndex{latest: d.uvarint(), stamp: d.varint(), status: d.str(), time: d.time()}
	if err := d.done(); err != nil {
		return runIndex{}, &checkpoint.CorruptError{RunID: runID, What: "run index", Err: err}
	}
	return x, nil
}
