package strictyaml

import (
	"fmt"
	"math/big"
	"reflect"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// ints has a field of every integer type the integer rule covers, and
// some it leaves alone.
type ints struct {
	I    int           `yaml:"i"`
	I8   int8          `yaml:"i8"`
	I64  int64         `yaml:"i64"`
	U    uint          `yaml:"u"`
	U8   uint8         `yaml:"u8"`
	U64  uint64        `yaml:"u64"`
	P    *int          `yaml:"p"`
	D    time.Duration `yaml:"d"`
	Text textInt       `yaml:"text"`
	F    float64       `yaml:"f"`
}

// textInt is an int that decodes itself from text.
type textInt int

func (t *textInt) UnmarshalText(b []byte) error { *t = textInt(len(b)); return nil }

func TestCheckInt(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"i: 2", ""},
		{"i: -2", ""},
		{"i: +2", ""},
		{"i: 0", ""},
		{"i: -0", ""},
		{"i: !!int 3", ""},
		{"i: 9223372036854775807", ""},
		{"i: -9223372036854775808", ""},
		{"p: 2", ""},
		{"i: ~", ""},
		{"i: 1.5", "wrong type"},
		{"i: 2.0", "wrong type"}, // a float, though whole
		{"i: 1e3", "wrong type"},
		{"i: 1e20", "wrong type"},
		{"i: -1e20", "wrong type"},
		{"i: .inf", "wrong type"},
		{"i: -.inf", "wrong type"},
		{"i: .nan", "wrong type"},
		{"i: !!float 3", "wrong type"},
		{"i: !!int 1.5", "wrong type"},
		{"i: '2'", "wrong type"},
		{"i: two", "wrong type"},
		{"i: true", "wrong type"},
		{"i: 2024-01-01", "wrong type"},
		{"i: [2]", "wrong type"},
		{"p: 1.5", "wrong type"},
		{"i: 0x10", "integer not in decimal"},
		{"i: -0x10", "integer not in decimal"},
		{"i: 0o17", "integer not in decimal"},
		{"i: 0b11", "integer not in decimal"},
		{"i: 010", "integer not in decimal"}, // octal 8 to yaml.v3, 10 to YAML 1.2
		{"i: 00", "integer not in decimal"},
		{"i: 1_000", "integer not in decimal"},
		{"i: !!int 0x10", "integer not in decimal"},
		{"i: 9223372036854775808", "integer out of range"},
		{"i: -9223372036854775809", "integer out of range"},
		{"i: 99999999999999999999", "integer out of range"}, // resolves as a float
		{"i8: 127", ""},
		{"i8: 128", "integer out of range"},
		{"i8: -129", "integer out of range"},
		{"i64: 1.5", "wrong type"},
		{"u: 0", ""},
		{"u: -0", ""},
		{"u: -1", "integer out of range"},
		{"u8: 255", ""},
		{"u8: 300", "integer out of range"},
		{"u64: 18446744073709551615", ""},
		{"u64: 18446744073709551616", "integer out of range"},
		{"d: 5m", ""},     // time.Duration is read from text by yaml.v3: left to Scalar
		{"text: 1.5", ""}, // decodes itself: left to Scalar
		{"f: 1.5", ""},
		{"f: 2", ""},
	} {
		ps := (&Checker{Scalar: Decodes}).Check(parse(t, tc.src), reflect.TypeFor[ints]())
		got := ""
		if len(ps) > 0 {
			got = ps[0].Kind.String()
		}
		if len(ps) > 1 || got != tc.want {
			t.Errorf("%s: problems %s, want %q", tc.src, brief(ps), tc.want)
			continue
		}
		if got == "" {
			continue
		}
		if p := ps[0]; p.Line != 1 || p.Node == nil || p.Want == nil || p.Path == "" {
			t.Errorf("%s: problem %+v lacks its line, node, type or path", tc.src, p)
		}
	}
}

// TestCheckIntEverywhere: the rule holds inside lists, maps, aliases and
// merges, whatever Scalar says.
func TestCheckIntEverywhere(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"items:\n  - {count: 1_5}\n", `2 integer not in decimal "items[0].count" "";`},
		{"by_name:\n  k: {count: 2.0}\n", `2 wrong type "by_name.k.count" "";`},
		{"ptr: {count: 300000000000000000000}\n", `1 integer out of range "ptr.count" "";`},
		{"a: &a 1.5\nptr: {count: *a}\n", `1 unknown key "" "a";1 wrong type "ptr.count" "";`},
		{"ptr:\n  <<: {count: 0x1}\n", `2 integer not in decimal "ptr.count" "";`},
	} {
		for _, c := range []Checker{{Merge: true}, {Merge: true, Scalar: Decodes}} {
			if got := brief(c.Check(parse(t, tc.src), reflect.TypeFor[outer]())); got != tc.want {
				t.Errorf("%q:\ngot  %s\nwant %s", tc.src, got, tc.want)
			}
		}
	}
}

func TestIntBounds(t *testing.T) {
	for _, tc := range []struct {
		t      reflect.Type
		lo, hi string
	}{
		{reflect.TypeFor[int8](), "-128", "127"},
		{reflect.TypeFor[int64](), "-9223372036854775808", "9223372036854775807"},
		{reflect.TypeFor[uint8](), "0", "255"},
		{reflect.TypeFor[uint64](), "0", "18446744073709551615"},
	} {
		if lo, hi := IntBounds(tc.t); lo != tc.lo || hi != tc.hi {
			t.Errorf("IntBounds(%s) = %s, %s", tc.t, lo, hi)
		}
	}
}

// FuzzInt: a number the check lets into an integer field decodes as
// exactly the integer its text reads in decimal, for every integer type;
// and an integer in plain decimal digits that fits is never refused.
func FuzzInt(f *testing.F) {
	for _, s := range []string{
		"2", "-2", "+2", "0", "-0", "1.5", "2.0", "1e3", "-1e20", "-.inf", ".nan", "0x10", "010", "1_000",
		"0b11", "0o17", "127", "128", "255", "256", "-129", "9223372036854775807", "9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616", "99999999999999999999",
		"9.223372036854775807e18", "'3'", "!!int 3", "!!float 3", "!!int 0x10", "!!int 1.5", "~", "[1]",
	} {
		f.Add(s)
	}
	types := []reflect.Type{
		reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](),
		reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](),
		reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
	}
	f.Fuzz(func(t *testing.T, s string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte("v: "+s), &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode ||
			len(doc.Content[0].Content) != 2 {
			return
		}
		n := doc.Content[0].Content[1]
		for _, typ := range types {
			st := reflect.StructOf([]reflect.StructField{{Name: "V", Type: typ, Tag: `yaml:"v"`}})
			ps := (&Checker{}).Check(doc.Content[0], st)
			want, plain := decimal(n.Value)
			if plain && n.ShortTag() == "!!int" {
				lo, hi := bounds(typ)
				if fits := want.Cmp(lo) >= 0 && want.Cmp(hi) <= 0; fits != (len(ps) == 0) {
					t.Fatalf("%s into %s: problems %s, fits %v", s, typ, brief(ps), fits)
				}
			}
			if len(ps) > 0 || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
				continue
			}
			v := reflect.New(st)
			if err := doc.Content[0].Decode(v.Interface()); err != nil {
				t.Fatalf("%s into %s: checked, but %v", s, typ, err)
			}
			got, _ := new(big.Int).SetString(fmt.Sprint(v.Elem().Field(0).Interface()), 10)
			if !plain || got.Cmp(want) != 0 {
				t.Fatalf("%s into %s: decodes as %s, reads %q", s, typ, got, n.Value)
			}
		}
	})
}
