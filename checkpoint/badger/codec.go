package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Records are framed as [SchemaVersion][body][crc32c(version+body), LE].
// The body is a compact sequence of varints and length-prefixed strings; a
// length of n+1 encodes n bytes and 0 encodes nil, so nil and empty survive a
// round trip.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type encoder struct{ b []byte }

func newEncoder(size int) *encoder {
	e := &encoder{b: make([]byte, 1, size+8)}
	e.b[0] = checkpoint.SchemaVersion
	return e
}

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) byte(v byte)      { e.b = append(e.b, v) }
func (e *encoder) raw(p []byte)     { e.b = append(e.b, p...) }

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// bytes writes p keeping nil distinct from empty.
func (e *encoder) bytes(p []byte) {
	if p == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(p)) + 1)
	e.b = append(e.b, p...)
}

func (e *encoder) strs(s []string) {
	if s == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(s)) + 1)
	for _, x := range s {
		e.str(x)
	}
}

func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
}

func (e *encoder) finish() []byte {
	return binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(e.b, castagnoli))
}

// decoder reads a framed record. The first error sticks; later reads return
// zero values, so callers check err once at the end.
type decoder struct {
	b   []byte
	err error
}

func newDecoder(rec []byte) *decoder {
	d := &decoder{}
	switch {
	case len(rec) < 5:
		d.err = errTruncated
	case rec[0] != checkpoint.SchemaVersion:
		d.err = fmt.Errorf("unknown schema version %d (this build reads %d)", rec[0], checkpoint.SchemaVersion)
	default:
		body, sum := rec[:len(rec)-4], binary.LittleEndian.Uint32(rec[len(rec)-4:])
		if crc32.Checksum(body, castagnoli) != sum {
			d.err = errChecksum
		} else {
			d.b = body[1:]
		}
	}
	return d
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.fail(errTruncated)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(errTruncated)
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) str() string { return string(d.take(d.uvarint())) }

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	return slices.Clone(d.take(n - 1))
}

// count reads an n+1 count of items needing at least one byte each; 0 means nil.
func (d *decoder) count() (n int, isNil bool) {
	c := d.uvarint()
	if c == 0 || d.err != nil {
		return 0, true
	}
	if c-1 > uint64(len(d.b)) {
		d.fail(errTruncated)
		return 0, true
	}
	return int(c - 1), false
}

func (d *decoder) strs() []string {
	n, isNil := d.count()
	if isNil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			d.fail(errors.New("bad time"))
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec))
	default:
		d.fail(errors.New("bad time flag"))
		return time.Time{}
	}
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errTrailing
	}
	return d.err
}
