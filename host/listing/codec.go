package listing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/state"
)

// A summary is read for every run of a listing (10,000 of them in well
// under 100 ms), so it is encoded by hand: the version byte, then each
// field of Summary in order, strings and lists length-prefixed with
// uvarints, numbers as varints, times as Unix time and zone offset, and a
// cost as the bits of its float64.

// Encode encodes sum (version Version).
func Encode(sum Summary) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 256)}
	e.b = append(e.b, Version)
	e.int(int64(sum.Seq))
	e.str(sum.Goal)
	e.str(sum.Slug)
	if err := e.time(sum.CreatedAt); err != nil {
		return nil, err
	}
	e.str(sum.ExecDir)
	e.str(sum.WorkTree)
	e.int(int64(sum.Status))
	e.int(int64(sum.Mode))
	e.int(int64(sum.CurrentPhase))
	e.int(int64(sum.ReviewIteration))
	e.int(int64(sum.PlanRevision))
	e.int(int64(len(sum.Phases)))
	for _, p := range sum.Phases {
		e.int(int64(p.Status))
		e.int(int64(p.Attempt))
		if err := e.time(p.Started); err != nil {
			return nil, err
		}
		if err := e.time(p.Completed); err != nil {
			return nil, err
		}
		e.str(p.Commit)
	}
	e.int(int64(len(sum.Usage)))
	for _, u := range sum.Usage {
		e.str(u.Role)
		e.int(int64(u.InputTokens))
		e.int(int64(u.OutputTokens))
		e.int(int64(u.CachedTokens))
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(u.CostUSD))
	}
	e.str(sum.LastError)
	e.str(sum.Stash)
	e.int(int64(len(sum.Next)))
	for _, n := range sum.Next {
		e.str(n)
	}
	e.int(int64(sum.Lanes))
	return e.b, nil
}

// Decode decodes what Encode made; an error for anything else (another
// version, a cut or damaged record).
func Decode(b []byte) (Summary, error) {
	var sum Summary
	err := decodeTo(b, string(b), &sum, nil, false)
	return sum, err
}

// decodeTo is Decode into *sum, its strings cut from s (b's bytes as a
// string), its lists from sl's. With head, it keeps only the fields of a
// Head (ReadHead), needs no s and allocates nothing for the others, but
// checks the whole record as Decode does: a record one refuses, the
// other refuses.
func decodeTo(b []byte, s string, sum *Summary, sl *Slabs, head bool) error {
	if len(b) == 0 || b[0] != Version {
		return errors.New("not a summary of this version")
	}
	d := decoder{b: b[1:], head: head}
	if !head {
		d.s = s[1:]
	}
	sum.Seq = uint64(d.int())
	sum.Goal = d.str()
	sum.Slug = d.str()
	sum.CreatedAt = d.time()
	sum.ExecDir = d.str()
	sum.WorkTree = d.str()
	sum.Status = state.RunStatus(d.int())
	sum.Mode = state.Mode(d.int())
	sum.CurrentPhase = int(d.int())
	sum.ReviewIteration = int(d.int())
	sum.PlanRevision = int(d.int())
	if n := d.count(); n > 0 {
		var one [1]Phase
		if !head {
			sum.Phases = carve(sl.phaseSummaries(), n)
		}
		for i := range n {
			p := &one[0]
			if !head {
				p = &sum.Phases[i]
			}
			*p = Phase{Status: state.PhaseStatus(d.int()), Attempt: int(d.int()),
				Started: d.time(), Completed: d.time(), Commit: d.str()}
		}
	}
	if n := d.count(); n > 0 {
		if !head {
			sum.Usage = carve(sl.usageList(), n)
		}
		for i := range n {
			role := d.str()
			u := state.Usage{InputTokens: int(d.int()), OutputTokens: int(d.int()), CachedTokens: int(d.int())}
			u.CostUSD = math.Float64frombits(binary.LittleEndian.Uint64(d.take(8)))
			if !head {
				sum.Usage[i] = RoleUsage{Role: role, Usage: u}
			}
		}
	}
	sum.LastError = d.str()
	sum.Stash = d.keep()
	if n := d.count(); n > 0 {
		if !head {
			sum.Next = carve(sl.stringList(), n)
		}
		for i := range n {
			if next := d.str(); !head {
				sum.Next[i] = next
			}
		}
	}
	sum.Lanes = int(d.int())
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the summary", len(d.b))
	}
	return d.err
}

type encoder struct{ b []byte }

func (e *encoder) int(v int64) { e.b = binary.AppendVarint(e.b, v) }

func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

// time encodes t as its Unix seconds, nanoseconds and zone offset (a
// zero time as one 0 byte): what a time is in the state's JSON, where
// text made these three parses of nine times per summary.
func (e *encoder) time(t time.Time) error {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return nil
	}
	_, off := t.Zone()
	e.b = append(e.b, 1)
	e.int(t.Unix())
	e.int(int64(t.Nanosecond()))
	e.int(int64(off))
	return nil
}

// decoder reads a summary (or a listing's record); its strings are cut
// from one copy of it (s), not allocated one by one.
type decoder struct {
	b []byte
	s string // b's bytes, as b is cut from the front: s[len(s)-len(b):] is b
	// head skips the strings (str returns ""), all but those kept (keep),
	// and s is not made.
	head bool
	err  error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errors.New("a number is cut"))
		return 0
	}
	d.b = d.b[n:]
	return v
}

// take returns the next n bytes (zeros once the record is cut).
func (d *decoder) take(n int) []byte {
	if n < 0 || n > len(d.b) {
		d.fail(errors.New("the summary is cut"))
		return make([]byte, max(n, 0))
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n, w := binary.Uvarint(d.b)
	if w <= 0 || n > uint64(len(d.b)-w) {
		d.fail(errors.New("a string is cut"))
		return ""
	}
	d.b = d.b[w:]
	if d.head {
		d.take(int(n))
		return ""
	}
	at := len(d.s) - len(d.b)
	d.take(int(n))
	return d.s[at : at+int(n)]
}

// keep is str, a string a Head keeps too: made on its own there (empty
// for most runs, so nothing is made).
func (d *decoder) keep() string {
	if !d.head {
		return d.str()
	}
	n, w := binary.Uvarint(d.b)
	if w <= 0 || n > uint64(len(d.b)-w) {
		d.fail(errors.New("a string is cut"))
		return ""
	}
	d.b = d.b[w:]
	if n == 0 {
		return ""
	}
	return string(d.take(int(n)))
}

// count reads a list's length: at most one entry per byte left, so that a
// damaged length allocates nothing large.
func (d *decoder) count() int {
	n := d.int()
	if n < 0 || n > int64(len(d.b)) {
		d.fail(fmt.Errorf("a list of %d entries", n))
		return 0
	}
	return int(n)
}

// time decodes what encoder.time wrote, in the zone JSON would
// give the same time: UTC for offset 0, the local zone when it has that
// offset then, a zone of that offset otherwise.
func (d *decoder) time() time.Time {
	flag := d.take(1)
	if d.err != nil || flag[0] == 0 {
		return time.Time{}
	}
	if flag[0] != 1 {
		d.fail(fmt.Errorf("bad time flag %d", flag[0]))
		return time.Time{}
	}
	sec, nsec, off := d.int(), d.int(), d.int()
	if d.err != nil || nsec < 0 || nsec >= 1e9 || off <= -24*3600 || off >= 24*3600 {
		d.fail(errors.New("a time out of range"))
		return time.Time{}
	}
	t := time.Unix(sec, nsec)
	if off == 0 {
		return t.UTC()
	}
	if _, local := t.Zone(); local == int(off) {
		return t
	}
	return t.In(time.FixedZone("", int(off)))
}

func sortedRoles(u map[string]state.Usage) []string {
	roles := make([]string, 0, len(u))
	for r := range u {
		roles = append(roles, r)
	}
	slices.Sort(roles)
	return roles
}
