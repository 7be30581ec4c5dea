package strictyaml

import (
	"encoding"
	"math/big"
	"reflect"
	"time"

	"gopkg.in/yaml.v3"
)

// This file holds the rule for integers. yaml.v3 cuts a float down to fit
// an integer field (1.5 decodes as 1, -.inf as the least int64), reads
// 010 as octal 8 where YAML 1.2 reads 10, and drops underscores (1_0 is
// 10). So an integer field takes only an integer written in plain decimal
// digits, with an optional sign and no leading zero, that fits the field:
// what the file says is then what the field gets. 2.0 is a float in YAML
// and is refused like 1.5: accepting it would make "a whole number" mean
// two things, and script files, which check tags, always refused it.

// isInt reports whether t is an integer type the integer rule covers:
// the int and uint kinds, but not time.Duration (yaml.v3 reads it from
// strings such as 5m) nor types that decode themselves.
func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		return false
	}
	if t == reflect.TypeFor[time.Duration]() {
		return false
	}
	p := reflect.PointerTo(t)
	return !p.Implements(reflect.TypeFor[yaml.Unmarshaler]()) && !p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// CheckInt checks scalar n against integer type t (an int or uint kind)
// and returns what is wrong, or 0 when n decodes into t as exactly the
// integer it reads: WrongType when n is not an integer (a string, a
// boolean, a float such as 1.5, 2.0 or 1e3, or a number tagged !!float);
// NotDecimal when it is an integer YAML reads in another base or with
// underscores (0x10, 0o17, 0b11, 010, 1_000); OutOfRange when it is
// written in decimal digits but does not fit t (300 for uint8, -1 for a
// uint, 99999999999999999999 for an int).
func CheckInt(n *yaml.Node, t reflect.Type) Kind {
	tag := n.ShortTag()
	if tag != "!!int" && tag != "!!float" {
		return WrongType
	}
	v, ok := decimal(n.Value)
	switch {
	case !ok && tag == "!!int" && plainTag(n.Value) == "!!int":
		return NotDecimal
	case !ok:
		return WrongType
	}
	if lo, hi := bounds(t); v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
		return OutOfRange // a plain integer too large for int64 resolves as a float
	}
	if tag != "!!int" {
		return WrongType // tagged !!float: yaml.v3 would go through a float64
	}
	return 0
}

// plainTag is the tag YAML gives value s written plainly, untagged.
func plainTag(s string) string {
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).ShortTag()
}

// IntBounds returns the least and the greatest value of integer type t
// (an int or uint kind), in decimal, for messages.
func IntBounds(t reflect.Type) (lo, hi string) {
	l, h := bounds(t)
	return l.String(), h.String()
}

// bounds returns the least and the greatest value of integer type t.
func bounds(t reflect.Type) (lo, hi *big.Int) {
	bits := uint(t.Bits())
	one := big.NewInt(1)
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		hi = new(big.Int).Lsh(one, bits)
		return new(big.Int), hi.Sub(hi, one)
	}
	hi = new(big.Int).Lsh(one, bits-1)
	lo = new(big.Int).Neg(hi)
	return lo, hi.Sub(hi, one)
}

// decimal parses s as an integer in plain decimal digits: an optional
// sign, then 0 or digits not starting with 0. It refuses what YAML
// parsers read in different ways (leading zeros, underscores, base
// prefixes) and what is no integer.
func decimal(s string) (*big.Int, bool) {
	d := s
	if d != "" && (d[0] == '-' || d[0] == '+') {
		d = d[1:]
	}
	if d == "" || (d[0] == '0' && len(d) > 1) {
		return nil, false
	}
	for i := range len(d) {
		if d[i] < '0' || d[i] > '9' {
			return nil, false
		}
	}
	return new(big.Int).SetString(s, 10)
}
