package strictyaml

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type inner struct {
	Name  string  `yaml:"name" req:"required"`
	Count int     `yaml:"count"`
	Rate  float64 `yaml:"rate"`
	On    bool    `yaml:"on" req:"required,unless=off"`
	Off   bool    `yaml:"off"`
}

type Embedded struct {
	Extra string `yaml:"extra"`
}

// nest is a list of lists, as deep as it goes.
type nest []nest

type outer struct {
	Embedded `yaml:",inline"`
	Items    []inner          `yaml:"items"`
	ByName   map[string]inner `yaml:"by_name"`
	Ptr      *inner           `yaml:"ptr"`
	Nest     nest             `yaml:"nest"`
	Plain    string
	Skip     string `yaml:"-"`
}

func parse(t testing.TB, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return doc.Content[0]
}

// brief renders problems as "LINE KIND PATH KEY".
func brief(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%d %s %q %q;", p.Line, p.Kind, p.Path, p.Key)
	}
	return b.String()
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		c         Checker
		want      string
	}{
		{"good", "extra: x\nplain: y\nitems:\n  - {name: a, on: true, count: 2, rate: 1}\nby_name: {k: {name: b, off: true}}\n", Checker{Tag: "req"}, ""},
		{"unknown key", "nope: 1\n", Checker{}, `1 unknown key "" "nope";`},
		{"repeated key", "extra: a\nextra: b\n", Checker{}, `2 repeated key "" "extra";`},
		{"wrong scalar", "items:\n  - {count: x}\n", Checker{}, `2 wrong type "items[0].count" "";`},
		{"wrong kind", "ptr: [1]\nitems: {}\n", Checker{}, `1 wrong type "ptr" "";2 wrong type "items" "";`},
		{"missing", "items:\n  - {count: 1}\n", Checker{Tag: "req"}, `2 missing key "items[0]" "name";2 missing key "items[0]" "on";`},
		{"missing value", "ptr: {name: , on: true}\n", Checker{Tag: "req"}, `1 missing value "ptr.name" "name";`},
		{"misspelt hides missing", "ptr: {nam: a, on: true}\n", Checker{Tag: "req"}, `1 unknown key "ptr" "nam";`},
		{"key not a name", "? [a]\n: 1\n", Checker{}, `1 key not a name "" "";`},
		{"merge off", "ptr:\n  <<: {name: a}\n", Checker{}, `2 merge key "ptr" "";`},
		{"merge on", "a: &a {name: a}\nptr:\n  <<: *a\n  on: true\n", Checker{Merge: true, Tag: "req"}, `1 unknown key "" "a";`},
		{"merge overridden", "ptr:\n  <<: {name: a, on: true}\n  name: b\n", Checker{Merge: true, Tag: "req"}, ""},
		{"merge non-mapping", "ptr:\n  <<: [1]\n", Checker{Merge: true}, `2 merge of a non-mapping "ptr" "";`},
		{"max", "a: 1\nb: 2\n", Checker{Max: 1}, `1 unknown key "" "a";`},
		{"cycle", "nest: &a\n  - []\n  - *a\n", Checker{}, `3 alias cycle "" "";`},
		{"depth", "nest: &a\n  - []\n  - *a\n", Checker{MaxAliasDepth: 3}, `3 aliases too deep "" "";`},
		{"cycle of another type", "by_name: &a\n  k: *a\n", Checker{MaxAliasDepth: 3}, `2 unknown key "by_name.k" "k";`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := brief(tc.c.Check(parse(t, tc.src), reflect.TypeFor[outer]())); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestCheckLines(t *testing.T) {
	lines := map[string]int{}
	c := Checker{Lines: lines}
	if ps := c.Check(parse(t, "extra: x\nby_name:\n  k:\n    count: 1\n"), reflect.TypeFor[outer]()); len(ps) > 0 {
		t.Fatalf("problems: %s", brief(ps))
	}
	want := map[string]int{"extra": 1, "by_name": 2, "by_name.k": 3, "by_name.k.count": 4}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines = %v, want %v", lines, want)
	}
}

// TestCheckBillionLaughs: aliases that expand exponentially stop at
// MaxVisits instead of running for ever.
func TestCheckBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [[], []]\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	for _, c := range []Checker{{}, {MaxAliasDepth: 64}} {
		ps := c.Check(parse(t, b.String()), reflect.TypeFor[map[string]nest]())
		if len(ps) != 1 || ps[0].Kind != TooLarge {
			t.Errorf("%+v: problems %s, want one too large", c, brief(ps))
		}
	}
}

func TestScalars(t *testing.T) {
	for _, tc := range []struct {
		src      string
		t        reflect.Type
		tag, dec bool
	}{
		{"1", reflect.TypeFor[int](), true, true},
		{"1.0", reflect.TypeFor[int](), false, true},
		{"x", reflect.TypeFor[int](), false, false},
		{"yes", reflect.TypeFor[bool](), false, true}, // yaml.v3 takes YAML 1.1 booleans
		{"true", reflect.TypeFor[bool](), true, true},
		{"2", reflect.TypeFor[float64](), true, true},
		{"2024-01-01", reflect.TypeFor[string](), true, true},
		{"!!binary aGk=", reflect.TypeFor[string](), false, true},
	} {
		n := parse(t, tc.src)
		if got := FitsTag(n, tc.t); got != tc.tag {
			t.Errorf("FitsTag(%s, %s) = %v", tc.src, tc.t, got)
		}
		if got := Decodes(n, tc.t); got != tc.dec {
			t.Errorf("Decodes(%s, %s) = %v", tc.src, tc.t, got)
		}
	}
}

func TestDescribe(t *testing.T) {
	for src, want := range map[string]string{
		"{}": "a mapping", "[]": "a list", "abcdef": `"abc…"`, "ab": `"ab"`,
	} {
		if got := Describe(parse(t, src), 3); got != want {
			t.Errorf("Describe(%s) = %s, want %s", src, got, want)
		}
	}
	if got := Describe(&yaml.Node{Kind: yaml.AliasNode}, 3); got != "an alias" {
		t.Errorf("Describe(alias) = %s", got)
	}
}

// FuzzCheck: any YAML the parser takes is checked without panicking or
// running away, every problem has a line and a kind, and Max is kept.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"extra: x\nitems:\n  - {name: a, on: true}\n",
		"a: &a {name: a}\nptr:\n  <<: *a\n",
		"items: &a\n  - *a\n",
		"by_name: {k: {count: x}, k: 2}\n",
		"? [a]\n: 1\n",
		"items:\n  - {count: 1.5}\n  - {count: 0x10}\n  - {count: 99999999999999999999}\n",
	} {
		f.Add(s, false, uint8(0))
		f.Add(s, true, uint8(1))
	}
	f.Fuzz(func(t *testing.T, src string, merge bool, max uint8) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		c := Checker{Merge: merge, Tag: "req", Max: int(max % 4), MaxAliasDepth: int(max % 3 * 8), MaxVisits: 1 << 12, Lines: map[string]int{}}
		ps := c.Check(doc.Content[0], reflect.TypeFor[outer]())
		if c.Max > 0 && len(ps) > c.Max {
			t.Errorf("%d problems, Max %d", len(ps), c.Max)
		}
		for _, p := range ps {
			if p.Line <= 0 || p.Kind < WrongType || p.Kind > OutOfRange {
				t.Errorf("problem %+v", p)
			}
		}
	})
}
